"""PostgreSQL's side of the SQL that differs between engines (memory/engines/base.py).

A claim ends its SELECT with `FOR UPDATE SKIP LOCKED`: each worker locks the
rows it takes until its transaction ends, and another worker's SELECT passes
them by instead of waiting or taking them too. JSON fields are read with
`->>` from the text cast to `jsonb`.
"""

from __future__ import annotations

__all__ = ["POSTGRESQL"]


class PostgresDialect:
    name = "postgresql"

    def skip_locked(self) -> str:
        return " FOR UPDATE SKIP LOCKED"

    def json_text(self, column: str, key: str) -> str:
        return f"({column})::jsonb ->> '{key}'"


POSTGRESQL = PostgresDialect()
