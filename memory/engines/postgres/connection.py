"""A psycopg connection that takes the SQL Loci writes for SQLite, where the two agree.

Loci's SQL uses `?` placeholders (and SQLite's numbered `?1`, which a
statement may repeat); psycopg uses `%s` (and `%(name)s`) and reads every
`%` of a query as the start of one. `pg_sql` rewrites a statement once (the
result is cached): each `%` is doubled, each `?` outside a quoted string or
identifier becomes `%s`, and `?N` becomes `%(pN)s`, its parameters then
passed by those names. `PgConnection` gives the two calls the SQL
functions of the rest of Loci make, `execute` and `executemany`, and returns
psycopg's cursor, whose `fetchone`, `fetchall`, iteration and `rowcount`
behave as sqlite3's do (rows are tuples). Parameters are always passed, if
only as an empty tuple, so psycopg reads a doubled `%` back as one. A new row's id is asked for with
`RETURNING id`, which SQLite understands too; a cursor has no `lastrowid`.

`conn` is the connection itself and `query` yields rows as dicts, so a
function written for a sqlite-utils `Database` (which reaches the raw
connection as `db.conn`, and reads dicts with `db.query`) takes either.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any

import psycopg

from loci.memory.engines.postgres.dialect import POSTGRESQL

__all__ = ["CONNECT_TIMEOUT_S", "PgConnection", "pg_sql"]

CONNECT_TIMEOUT_S = 30.0  # how long opening a connection waits for the server


@lru_cache(maxsize=4096)
def pg_sql(sql: str) -> str:
    """`sql` with `?` placeholders as psycopg's `%s`, and `?N` as `%(pN)s` (quoted text left alone); every `%`
    escaped."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(sql):
        char = sql[i]
        i += 1
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "?":
            digits = len(sql[i:]) - len(sql[i:].lstrip("0123456789"))
            out.append(f"%(p{sql[i : i + digits]})s" if digits else "%s")
            i += digits
            continue
        out.append("%%" if char == "%" else char)
    return "".join(out)


def _params(sql: str, params: Sequence[Any] | None) -> Sequence[Any] | dict[str, Any]:
    """The parameters as psycopg takes them for `pg_sql(sql)`: by name `pN` when the SQL numbers them."""
    values = tuple(params or ())
    return {f"p{n}": value for n, value in enumerate(values, 1)} if "%(p" in pg_sql(sql) else values


class PgConnection:
    """One psycopg connection, inside the transaction its store opened."""

    dialect = POSTGRESQL

    def __init__(self, raw: psycopg.Connection) -> None:
        self.raw = raw
        self.grown: dict[str, int] = {}  # table -> rows this transaction added in bulk (`grew`)

    def grew(self, table: str, rows: int) -> None:
        """Note that this transaction added `rows` rows to `table` in one statement (the store may then refresh
        the table's planner statistics once the transaction commits)."""
        self.grown[table] = self.grown.get(table, 0) + rows

    @property
    def conn(self) -> PgConnection:
        return self

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> psycopg.Cursor:
        return self.raw.execute(pg_sql(sql), _params(sql, params))

    def query(self, sql: str, params: Sequence[Any] | None = None) -> Iterator[dict[str, Any]]:
        """The rows of `sql` as dicts by column name, as a sqlite-utils `Database.query` gives them."""
        cursor = self.execute(sql, params)
        names = [column.name for column in cursor.description or ()]
        for row in cursor:
            yield dict(zip(names, row, strict=True))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> psycopg.Cursor:
        cursor = self.raw.cursor()
        cursor.executemany(pg_sql(sql), list(rows))
        return cursor
