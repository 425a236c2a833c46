"""SQLite's side of the SQL that differs between engines (memory/engines/base.py).

A claim needs nothing at the end of its SELECT, because
`Store.write` already holds SQLite's one write lock (`BEGIN IMMEDIATE`) for
the whole transaction; JSON fields are read with `json_extract`.
"""

from __future__ import annotations

__all__ = ["SQLITE"]


class SqliteDialect:
    name = "sqlite"

    def skip_locked(self) -> str:
        return ""

    def json_text(self, column: str, key: str) -> str:
        return f"json_extract({column}, '$.{key}')"


SQLITE = SqliteDialect()
