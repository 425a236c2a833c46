"""docs/troubleshooting.md quotes what Loci prints: each line it quotes here is made by the code that prints it.

A path in a message is written `PATH` on the page, a PostgreSQL URL `postgresql://…`, and the cause a foreign error
gives (sqlite3's, psycopg's) `…`; each line is made by the code with those, from a real failure where one is cheap
(a SQLite lock held, a read-only file, sources `loci home copy` refuses), and must appear on the page as it is.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import psycopg
import pytest
from starlette.requests import ClientDisconnect

from loci.memory.engines.copy import open_source
from loci.memory.engines.postgres.health import translate as pg_translate
from loci.memory.engines.sqlite.health import translate
from loci.memory.errors import StoreUnavailable, UsageError
from loci.memory.json_input import TooDeep, loads
from loci.servers.errors import unavailable
from loci.servers.transports.http_bounds import (
    FULL,
    HEADER_TIMEOUT_S,
    MAX_HEADER_BYTES,
    TOO_BIG,
    TOO_SLOW,
    QuietResets,
)
from loci.servers.transports.request_ids import answer_to_invalid_id

PAGE = (Path(__file__).resolve().parents[1] / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
ELIDED = "…"


def _quoted(line: str) -> None:
    assert line in PAGE, f"docs/troubleshooting.md does not quote what Loci prints: {line}"


def _sqlite_failure(db: Path, *, read_only: bool) -> sqlite3.OperationalError:
    """A real write refused by SQLite: the file opened read-only, or locked by another connection."""
    sqlite3.connect(db).execute("CREATE TABLE IF NOT EXISTS t (x)").connection.commit()
    holder = sqlite3.connect(db, isolation_level=None)
    writer = sqlite3.connect(f"file:{db}?mode=ro" if read_only else db, uri=read_only, timeout=0, isolation_level=None)
    try:
        if not read_only:
            holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(sqlite3.OperationalError) as failed:
            writer.execute("INSERT INTO t VALUES (1)")
    finally:
        holder.close()
        writer.close()
    return failed.value


def test_a_sqlite_home_locked_or_read_only_is_quoted_as_the_store_says_it(tmp_path: Path) -> None:
    locked = translate(_sqlite_failure(tmp_path / "a.db", read_only=False), Path("PATH"), "write")
    assert isinstance(locked, StoreUnavailable)
    _quoted(str(locked))
    refused = _sqlite_failure(tmp_path / "b.db", read_only=True)
    _quoted(str(translate(refused, Path("PATH"), "write")).replace(str(refused), ELIDED))


def test_a_postgresql_home_away_is_quoted_as_the_store_and_the_server_say_it() -> None:
    away = psycopg.OperationalError(f"connection failed: {ELIDED}")
    written = pg_translate(away, "postgresql://…", "write")
    assert isinstance(written, StoreUnavailable)
    _quoted(str(written).replace(str(away), ELIDED))
    _quoted(str(pg_translate(away, "postgresql://…", "read")).replace(str(away), ELIDED))
    error = unavailable(written).error.model_dump(exclude_none=True)
    _quoted(f"```json\n{json.dumps({'jsonrpc': '2.0', 'id': 7, 'error': error}, ensure_ascii=False)}\n```")
    _quoted(f'`"data": {json.dumps(unavailable(StoreUnavailable("x", in_doubt=True)).data)}`')


def test_a_request_whose_id_is_not_valid_is_quoted_as_every_path_answers_it() -> None:
    _quoted(f"`{answer_to_invalid_id({'jsonrpc': '2.0', 'id': 1.5, 'method': 'tools/list'})}`")


def test_the_http_bounds_are_quoted_as_a_refused_connection_is_told() -> None:
    _quoted(f"`408` `{TOO_SLOW.format(header_timeout=HEADER_TIMEOUT_S)}`")
    _quoted(f"`431` `{TOO_BIG.format(max_header_bytes=MAX_HEADER_BYTES)}`")
    _quoted(f"`503` `{FULL}`")
    reset = ClientDisconnect()
    record = logging.LogRecord(
        "mcp.server.streamable_http", logging.ERROR, "", 0, "x", (), (ClientDisconnect, reset, None)
    )
    QuietResets().filter(record)
    _quoted(f"`loci: mcp.server.streamable_http: {record.getMessage()}`")


def test_deep_json_is_quoted_as_it_is_refused() -> None:
    with pytest.raises(TooDeep) as deep:
        loads("[" * 101 + "]" * 101)
    _quoted(f"`FILE: refused: {deep.value}`")


async def test_the_sources_home_copy_refuses_are_quoted_as_it_refuses_them(tmp_path: Path) -> None:
    empty, text, foreign = tmp_path / "empty.db", tmp_path / "text.db", tmp_path / "foreign.db"
    empty.touch()
    text.write_text("not a database at all, not even close to one " * 40)
    sqlite3.connect(foreign).execute("CREATE TABLE notes (x)").connection.commit()
    for source, elided in ((empty, ""), (text, ""), (foreign, "(notes)")):
        with pytest.raises(UsageError) as refused:
            await open_source(str(source))
        said = str(refused.value).replace(str(source), "PATH")
        _quoted(f"`{said.replace(elided, f'({ELIDED})') if elided else said}`")
