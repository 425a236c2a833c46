"""One store, two engines: the same SQL, written once, reads and writes a home on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from loci.memory.engines.dialects import dialect_of
from loci.memory.engines.select import open_engine, use_engine
from loci.memory.jobs.queue import JOBS_CHANNEL
from loci.memory.location import is_postgres

INSERT_JOB = (
    "INSERT INTO jobs (project, kind, key, payload, max_attempts, created, updated)"
    " VALUES (?, ?, ?, ?, 3, 1.0, 1.0) ON CONFLICT (project, key) DO NOTHING RETURNING id"
)


def _queue(conn: Any, project: str, key: str, payload: dict[str, Any]) -> int | None:
    row = conn.execute(INSERT_JOB, [project, "note", key, json.dumps(payload)]).fetchone()
    return row[0] if row else None


async def test_a_row_written_is_read_back_with_the_same_sql_on_either_engine(home: str) -> None:
    with anyio.fail_after(60):
        async with use_engine(home) as store:
            first = await store.write(lambda conn: _queue(conn, "a", "k1", {"text": "100% sure"}))
            again = await store.write(lambda conn: _queue(conn, "a", "k1", {"text": "other"}))
            other = await store.write(lambda conn: _queue(conn, "b", "k1", {"text": "b's"}))
            rows = await store.read(
                lambda conn: conn.execute(
                    "SELECT id, project, payload FROM jobs WHERE payload LIKE '%100%%' ORDER BY id"
                ).fetchall()
            )
    assert isinstance(first, int) and again is None and isinstance(other, int) and other != first
    assert [tuple(row) for row in rows] == [(first, "a", json.dumps({"text": "100% sure"}))]


async def test_a_write_that_fails_leaves_nothing_on_either_engine(home: str) -> None:
    def half_then_fail(conn: Any) -> None:
        _queue(conn, "a", "k1", {})
        raise ValueError("stop")

    with anyio.fail_after(60):
        async with use_engine(home) as store:
            with pytest.raises(ValueError, match="stop"):
                await store.write(half_then_fail)
            count = await store.read(lambda conn: conn.execute("SELECT count(*) FROM jobs").fetchone()[0])
    assert count == 0


async def test_the_dialect_reads_a_json_field_on_either_engine(home: str) -> None:
    with anyio.fail_after(60):
        store = await open_engine(home)
        try:
            await store.write(lambda conn: _queue(conn, "a", "k1", {"signature": "s-1", "n": 2}))
            await store.write(lambda conn: _queue(conn, "a", "k2", {"signature": "s-2"}))
            dialect = dialect_of(store)
            sql = f"SELECT key FROM jobs WHERE {dialect.json_text('payload', 'signature')} = ?"
            found = await store.read(lambda conn: conn.execute(sql, ["s-2"]).fetchall())
        finally:
            store.close()
    assert dialect.name == store.engine
    assert [row[0] for row in found] == ["k2"]


async def test_a_claim_takes_the_oldest_queued_job_once_on_either_engine(home: str) -> None:
    def claim(conn: Any) -> int | None:
        sql = f"SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1{dialect.skip_locked()}"
        row = conn.execute(sql).fetchone()
        if row is None:
            return None
        conn.execute("UPDATE jobs SET status = 'running' WHERE id = ?", [row[0]])
        return row[0]

    with anyio.fail_after(60):
        async with use_engine(home) as store:
            dialect = dialect_of(store)
            ids = [await store.write(lambda conn, k=k: _queue(conn, "a", k, {})) for k in ("k1", "k2")]
            claimed = [await store.write(claim) for _ in range(3)]
    assert claimed == [*ids, None]


async def test_a_home_says_what_it_can_do_on_either_engine(home: str) -> None:
    """What a caller asks instead of which engine a home is: where a small read or write runs, the file it may
    open itself (SQLite's), a listener that a committed notification wakes (PostgreSQL's), its full-text twin."""
    on_postgres = is_postgres(home)
    with anyio.fail_after(60):
        async with use_engine(home) as store:
            added = await store.write_bounded(lambda conn: _queue(conn, "a", "k1", {}))
            found = await store.read_bounded(lambda conn: conn.execute("SELECT id FROM jobs").fetchall())
            listener = await store.listen(JOBS_CHANNEL)
            woken = None
            if listener is not None:
                try:
                    notify = dialect_of(store).notify(JOBS_CHANNEL)
                    await store.write(lambda conn: conn.execute(notify, ["a"]).fetchall())
                    woken = await listener.wait(30)
                finally:
                    await listener.aclose()
            twin = dialect_of(store).pick(sqlite="fts5", postgresql="tsvector")
    assert [tuple(row) for row in found] == [(added,)]
    assert store.local_file == (None if on_postgres else Path(home))
    assert woken is (True if on_postgres else None)
    assert twin == ("tsvector" if on_postgres else "fts5")
