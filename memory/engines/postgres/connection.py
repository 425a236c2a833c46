"""A psycopg connection that takes the SQL Loci writes for SQLite, where the two agree.

Loci's SQL uses `?` placeholders; psycopg uses `%s` and reads every `%` of a
query as the start of one. `pg_sql` rewrites a statement once (the result is
cached): each `%` is doubled and each `?` outside a quoted string or
identifier becomes `%s`. `PgConnection` gives the two calls the SQL
functions of the rest of Loci make, `execute` and `executemany`, and returns
psycopg's cursor, whose `fetchone`, `fetchall`, iteration and `rowcount`
behave as sqlite3's do (rows are tuples). Parameters are always passed, if
only as an empty tuple, so psycopg reads a doubled `%` back as one. A new row's id is asked for with
`RETURNING id`, which SQLite understands too; a cursor has no `lastrowid`.

`conn` is the connection itself, so a function written for a sqlite-utils
`Database` (which reaches the raw connection as `db.conn`) takes either.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import psycopg

__all__ = ["PgConnection", "pg_sql"]


@lru_cache(maxsize=4096)
def pg_sql(sql: str) -> str:
    """`sql` with `?` placeholders as psycopg's `%s` (quoted text left alone) and every `%` escaped."""
    out: list[str] = []
    quote = ""
    for char in sql:
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "?":
            out.append("%s")
            continue
        out.append("%%" if char == "%" else char)
    return "".join(out)


class PgConnection:
    """One psycopg connection, inside the transaction its store opened."""

    def __init__(self, raw: psycopg.Connection) -> None:
        self.raw = raw

    @property
    def conn(self) -> PgConnection:
        return self

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> psycopg.Cursor:
        return self.raw.execute(pg_sql(sql), tuple(params or ()))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> psycopg.Cursor:
        cursor = self.raw.cursor()
        cursor.executemany(pg_sql(sql), list(rows))
        return cursor
