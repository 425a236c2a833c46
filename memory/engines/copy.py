"""Copying a home's rows to another home, on either engine, ids and history kept.

`copy_home(src, dst)` reads every table of the source in one snapshot
(its rows held in memory once) and writes them into the
destination in one transaction, so a copy that fails leaves the destination
as it was. A row keeps its id, so the graph's links, its events (its
history) and the queue's jobs still point where they did. What the engines
keep differently is asked of each side's dialect (memory/engines/base.py):
its tables and their columns, how many rows go in one statement, emptying
the full-text index, and moving an identity's sequence past the ids copied
in (`reset_ids`: on PostgreSQL, so the next row a home adds does not take an
id a copied row holds).

What is derived is not copied but made again: the full-text indexes of the
graph (`memory_fts`) and of the context store (`context_fts`), and what their
triggers or FTS5 keep from them, are filled from the copied nodes and chunks
by the caller's `reindex` (memory/graph/pieces.py, memory/context/index/), since
SQLite's FTS5 and PostgreSQL's `tsvector` hold different things; each
home keeps its own record of migrations. The tables are written parents
first (`PARENTS`, which other tables' rows name), so PostgreSQL's foreign
keys hold at every statement.

The source is opened by `open_source`, to read only and without migrating
it: nothing is ever written to it, not even Loci's schema. A source that is
not a Loci home (an empty file, a SQLite file or a database without Loci's
record of migrations, a file that is not SQLite) is refused in one line.

A copy refuses, in one line (`UsageError`) and before it writes: a
destination that holds rows in Loci's tables already, unless `replace` (those
are emptied first, in the same transaction; a table of another tool in the
same file or database is left as it is); a source table with rows whose table the
destination lacks (a table of a later Loci, or of a tool beside it), unless
`skip_missing`; and a source column the destination's table lacks. Once
written, the destination's rows are counted again in a read of their own
(`Copied.found`), for the caller to compare.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import sqlite_utils

from loci.memory.engines.base import Engine
from loci.memory.engines.dialects import dialect_of
from loci.memory.engines.sqlite.connection import connect
from loci.memory.engines.sqlite.migrations import migration_sets
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import StoreError, UsageError
from loci.memory.location import is_postgres, shown

__all__ = ["DERIVED", "PARENTS", "Copied", "copy_home", "loci_tables", "open_source"]

# Made again in the destination, never copied: the full-text index and what is kept from it, the migrations.
DERIVED = frozenset(
    {
        "memory_fts",
        "memory_vocab",
        "memory_fts_count",
        "memory_postings",
        "context_fts",
        "context_fts_count",
        "context_postings",
        "_sqlite_migrations",
        "loci_migrations",
    }
)
# The tables whose rows other tables' rows name, written first (and emptied last).
PARENTS = ("memory_nodes", "chat_sessions", "context_objects", "runs")
BATCH = 10_000
# The full-text indexes a replaced destination empties before the copy (their kept counts and postings follow).
INDEXES = ("memory_fts", "context_fts")
# Where each engine records the migrations it applied: a home has one, and `PARENTS`; a foreign database does not.
MIGRATION_TABLES = ("_sqlite_migrations", "loci_migrations")
_AS = {"double precision": float, "real": float, "bigint": int, "integer": int, "smallint": int, "boolean": bool}


@dataclass(frozen=True)
class Copied:
    """One table copied: its rows in the source, and as the destination counts them after the copy."""

    table: str
    rows: int
    found: int


@dataclass(frozen=True)
class _Table:
    name: str
    columns: dict[str, str]  # name -> the destination's type
    rows: list[tuple[Any, ...]]


async def copy_home(
    src: Engine,
    dst: Engine,
    reindex: Callable[[Any], int],
    *,
    replace: bool = False,
    skip_missing: bool = False,
) -> tuple[list[Copied], list[str], int]:
    """Copy `src`'s rows into `dst` in one transaction; each table's count, the source's tables with rows left
    out (`skip_missing`), and the full-text rows `reindex(conn)` made in the destination."""
    schema = await dst.read(lambda db: _schema(db.conn))
    tables, missing = await src.read(lambda db: _snapshot(db.conn, schema))
    held = [_rows(name, count) for name, count in missing.items() if count]
    if held and not skip_missing:
        raise UsageError(
            f"{dst.location} has no table yet for {', '.join(held)} of {src.location}:"
            " give --skip-missing to copy the rest without them"
        )
    indexed = await dst.write(lambda db: _write(db.conn, tables, list(schema), reindex, replace=replace))
    counts = await dst.read(lambda db: {t.name: _count(db.conn, t.name) for t in tables})
    left_out = sorted(name for name, count in missing.items() if count)
    return [Copied(t.name, len(t.rows), counts[t.name]) for t in tables], left_out, indexed


def _snapshot(conn: Any, schema: dict[str, dict[str, str]]) -> tuple[list[_Table], dict[str, int]]:
    """The source's tables that `schema` (the destination's: table -> column -> type) also has, with their rows,
    parents first; and the rows of each source table the destination lacks."""
    names = _ordered(_data_tables(conn))
    missing = {name: _count(conn, name) for name in names if name not in schema}
    tables: list[_Table] = []
    for name in (n for n in names if n in schema):
        mine = [column[0] for column in conn.execute(f"SELECT * FROM {name} LIMIT 0").description]
        theirs = schema[name]
        lacking = [column for column in mine if column not in theirs and column != "rowid"]
        if lacking:
            raise UsageError(f"the destination's table {name} has no column {', '.join(lacking)}: is it older?")
        if "rowid" in theirs and "rowid" not in mine:  # an FTS5 table's key is its rowid, a column elsewhere
            mine.append("rowid")
        columns = {column: theirs.get(column, "") for column in mine}
        select = ", ".join(f'"{column}"' if column != "rowid" else column for column in columns)
        rows = conn.execute(f"SELECT {select} FROM {name}").fetchall()
        tables.append(_Table(name, columns, [_typed(row, list(columns.values())) for row in rows]))
    return tables, missing


def _schema(conn: Any) -> dict[str, dict[str, str]]:
    """The home's data tables, each with its columns and their types."""
    columns = dialect_of(conn).columns()
    return {name: dict(conn.execute(columns, [name]).fetchall()) for name in _data_tables(conn)}


def _data_tables(conn: Any) -> list[str]:
    return sorted(name for (name,) in conn.execute(dialect_of(conn).tables()).fetchall() if name not in DERIVED)


def _ordered(names: list[str]) -> list[str]:
    return [name for name in PARENTS if name in names] + [name for name in names if name not in PARENTS]


def _typed(row: tuple[Any, ...], types: list[str]) -> tuple[Any, ...]:
    """A source row's values as the destination's column types take them (SQLite keeps a whole number in a
    REAL column as an integer; PostgreSQL wants one type a column)."""
    return tuple(
        value if value is None or (cast := _AS.get(kind.lower())) is None else cast(value)
        for value, kind in zip(row, types, strict=True)
    )


def _count(conn: Any, table: str) -> int:
    return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _write(conn: Any, tables: list[_Table], present: list[str], reindex: Callable[[Any], int], *, replace: bool) -> int:
    """Write the copy in the destination's transaction: empty it first (`replace`) or refuse one that holds
    rows, insert each table's rows, move the ids on, and fill the full-text index."""
    dialect = dialect_of(conn)
    present = [name for name in present if name in loci_tables()]  # another tool's tables are left alone
    held = [_rows(name, count) for name in _ordered(present) if (count := _count(conn, name))]
    if held and not replace:
        raise UsageError(
            f"the destination is not empty: it holds {', '.join(held[:4])}{' ...' if len(held) > 4 else ''};"
            " give --replace to empty it and copy into it"
        )
    if held:
        for name in reversed(_ordered(present)):  # children first, so no row names one already gone
            conn.execute(f"DELETE FROM {name}")
        for index in INDEXES:  # derived, so not emptied above: rows of the old chunks and nodes would stay
            conn.execute(dialect.clear_index(index))
    for table in tables:
        for start in range(0, len(table.rows), BATCH):
            dialect.insert_many(conn, table.name, _quoted(table.columns), table.rows[start : start + BATCH])
        dialect.reset_ids(conn, table.name)
    return reindex(conn)


def _rows(table: str, count: int) -> str:
    return f"{table} ({count:,} row{'s' if count != 1 else ''})"


def _quoted(columns: dict[str, str]) -> dict[str, str]:
    """Column names as an INSERT names them: quoted (`end` is a keyword), but for an FTS5 table's `rowid`."""
    return {(f'"{name}"' if name != "rowid" else name): kind for name, kind in columns.items()}


@lru_cache(maxsize=1)
def loci_tables() -> frozenset[str]:
    """The names of the tables Loci's migrations make (on SQLite; PostgreSQL's derived ones are in `DERIVED`)."""
    db = sqlite_utils.Database(memory=True)
    for migrations in migration_sets():
        migrations.apply(db)
    return frozenset(db.table_names()) | DERIVED


async def open_source(location: str) -> Engine:
    """The home at `location`, opened to read only and not migrated; one `UsageError` line when it is not a home."""
    if is_postgres(location):
        from loci.memory.engines.postgres.store import PgStore  # psycopg is the `postgres` extra: only when asked for

        source: Engine = await PgStore.open(location, query_only=True, migrate=False)
    else:
        source = _sqlite_source(Path(location))
    try:
        tables = set(await source.read(lambda db: [row[0] for row in db.conn.execute(dialect_of(db.conn).tables())]))
    except StoreError as exc:
        source.close()
        raise UsageError(f"the source {shown(location)} is not a Loci home: {exc}") from exc
    if not tables & set(MIGRATION_TABLES) or not tables & set(PARENTS):
        source.close()
        what = "it holds no table" if not tables else f"it has none of Loci's tables ({', '.join(sorted(tables)[:4])})"
        raise UsageError(f"the source {shown(location)} is not a Loci home: {what}")
    return source


def _sqlite_source(path: Path) -> Store:
    if os.path.getsize(path) == 0:
        raise UsageError(f"the source {path} is an empty file, not a Loci home")
    try:
        conn = connect(path, "ro")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"the source {path} is not a Loci home: {exc}") from exc
    return Store(path, conn, "the source of a copy is only read", "ro", query_only=True)
