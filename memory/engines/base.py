"""What the rest of Loci needs from a database, whichever engine holds it.

A home is opened once (`memory.engines.select.open_engine`) and then used
through two calls: `read(fn)` runs `fn(conn)` on a consistent snapshot and
`write(fn)` runs it in one transaction, both in a worker thread, so the
event loop never waits on the database. `conn` answers `execute(sql,
params)` and `executemany(sql, rows)` with `?` placeholders on both engines,
and its rows are tuples: SQL that is the same on both engines is written
once. SQLite's store (`memory.store.Store`) and PostgreSQL's
(`memory.engines.postgres.store.PgStore`) both fit `Engine`.

Where the engines' SQL differs, the difference is a method of `Dialect`,
one class per engine (memory/engines/sqlite.py,
memory/engines/postgres/dialect.py): the SQL that uses it asks the dialect
of its store (`dialect_of`) for the fragment instead of testing which
engine it runs on. What differs so far: taking the next rows of a queue
without waiting on the rows another worker holds, and reading a field of a
JSON text column. Upserts (`ON CONFLICT`) and `RETURNING` are the same on
both (SQLite 3.35 and later) and need no dialect. Full-text search differs
most (FTS5 tables on SQLite, `tsvector` columns with a GIN index on
PostgreSQL: memory/engines/postgres/schema/graph.py) and joins the
dialect with the graph's queries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

__all__ = ["Dialect", "Engine"]

T = TypeVar("T")


class Dialect(Protocol):
    """The SQL fragments that differ between engines."""

    name: str

    def skip_locked(self) -> str:
        """What ends a SELECT that claims rows, so two workers never claim the same row."""
        ...

    def json_text(self, column: str, key: str) -> str:
        """The text of field `key` of the JSON object stored as text in `column`."""
        ...


class Engine(Protocol):
    """A home: where it is, its dialect, and transactions run in a worker thread."""

    engine: str

    @property
    def location(self) -> str: ...

    async def read(self, fn: Callable[[Any], T]) -> T: ...

    async def write(self, fn: Callable[[Any], T]) -> T: ...

    def close(self) -> None: ...
