"""A home on PostgreSQL: a pool of connections, each transaction in a worker thread.

`PgStore` has the face of SQLite's `Store` (memory/store.py): `open`, then
`read(fn)` and `write(fn)`, which run `fn(conn)` in a worker thread on a
connection borrowed from a psycopg pool (`PgConnection`, `?` placeholders),
and `close`. A read is one `REPEATABLE READ, READ ONLY` transaction (said in
its `BEGIN`, which psycopg writes from the connection's settings), a
consistent snapshot that cannot write, as SQLite's readers see one WAL
snapshot; a store opened `query_only` (the page) gets nothing more, since
every read is read-only already. A write is one transaction; unlike
SQLite's one writer, PostgreSQL runs several at once and its row locks
decide who waits, so there is no process-wide write lock here. Two writers
may then add the same key at once (a fact's text, an entity's name, an
edge, a run's episode), each having looked and found none: the second one's
insert waits for the first to commit, then fails with a unique violation.
That write is run again from the start, as SQLite would have run it after
the first: it now finds the first one's row and merges with it (a fact
counts a use, an entity is the same entity), as its code does for any row
it finds. So a write function keeps its effects inside its transaction (it
returns what it found, and changes nothing outside the database), and
running it again is safe.

`open` connects once first, directly, so a wrong host, user or database
says what the server said in one line (a pool would only time out), then
applies the pending migrations under the advisory lock
(memory/engines/postgres/migrations.py) and starts the pool. psycopg's
errors are translated in one place, `translate`: a server that cannot be
reached or that drops the connection is a `StoreError` naming the database
(without its password); any other error is a bug in the SQL and propagates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread
import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from memory.engines.postgres.connection import PgConnection
from memory.engines.postgres.dialect import POSTGRESQL
from memory.engines.postgres.migrations import migrate
from memory.errors import StoreError, UsageError
from memory.location import shown

__all__ = ["CONNECT_TIMEOUT_S", "PgStore", "translate"]

T = TypeVar("T")

CONNECT_TIMEOUT_S = 30.0
READERS = 4
WRITE_ATTEMPTS = 3  # a write that lost a race for a unique key is run again: it then finds the winner's row
GROWTH_TO_ANALYZE = 0.2  # a table grown by this share of its rows since its statistics were taken is analyzed
ROWS_TO_ANALYZE = 1_000  # ... by one transaction of at least this many rows (smaller writes: autovacuum's)
# The table a bulk load of an index fills through its triggers, vacuumed after the load: an index-only scan
# skips the table's pages only once VACUUM has marked them all-visible (autovacuum's next look is a minute away).
VACUUMED = {"memory_fts": "memory_postings"}


def _refresh_statistics(raw: psycopg.Connection, grown: dict[str, int]) -> None:
    """VACUUM the postings of an index a committed transaction grew by `ROWS_TO_ANALYZE` rows or more (`VACUUMED`),
    and ANALYZE each table it grew by as many, when they are
    `GROWTH_TO_ANALYZE` of the rows its statistics saw (or it was never analyzed), outside the transaction. A
    bulk load is faster than autovacuum's next look (a minute), and until the planner knows a table's size it
    reads a batch's lookups by the wrong index (a batch's twins by project, 200 ms instead of 1)."""
    for table, rows in grown.items():
        if rows < ROWS_TO_ANALYZE:
            continue
        if table in VACUUMED:  # its postings' index-only scans read each new row from the table until vacuumed
            raw.execute(f"VACUUM {VACUUMED[table]}")
        seen = raw.execute("SELECT reltuples FROM pg_class WHERE oid = CAST(%s AS regclass)", [table]).fetchone()
        if seen is not None and (seen[0] < 0 or rows >= GROWTH_TO_ANALYZE * seen[0]):
            raw.execute(f"ANALYZE {table}")


def translate(exc: psycopg.Error, location: str, doing: str) -> StoreError | None:
    """The one-line `StoreError` for a database that cannot be reached or went away; None for other errors."""
    if isinstance(exc, psycopg.OperationalError):
        return StoreError(f"cannot {doing} the Loci home {location}: {_first_line(exc)}")
    return None


def _first_line(exc: Exception) -> str:
    """The first line of psycopg's message, which names the server and the cause; spaces folded."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return " ".join(lines[0].split()) if lines else type(exc).__name__


class PgStore:
    """One PostgreSQL database. Use `PgStore.open(url)`; close it with `close()` or `async with`."""

    engine = "postgresql"
    dialect = POSTGRESQL
    read_only: str | None = None  # why this process cannot write the home: never known before a write fails

    def __init__(self, url: str, pool: ConnectionPool, *, query_only: bool = False) -> None:
        self.url = url
        self.query_only = query_only
        self._pool = pool
        self._limiter = anyio.CapacityLimiter(READERS)
        self._closed = False

    @property
    def location(self) -> str:
        return shown(self.url)

    @classmethod
    def open_sync(cls, url: str, *, query_only: bool = False, timeout: float = CONNECT_TIMEOUT_S) -> PgStore:
        """Connect to `url`, migrate it if needed, and start the pool."""
        try:
            conninfo_to_dict(url)
        except psycopg.ProgrammingError as exc:
            raise UsageError(f"{shown(url)} is not a PostgreSQL connection string: {_first_line(exc)}") from exc
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(timeout))) as raw:
                migrate(raw)
            pool = ConnectionPool(
                url, min_size=1, max_size=READERS + 1, open=False, name="loci", kwargs={"autocommit": True}
            )
            pool.open(wait=True, timeout=timeout)
        except psycopg.Error as exc:
            raise translate(exc, shown(url), "open") or StoreError(f"cannot open {shown(url)}: {exc}") from exc
        return cls(url, pool, query_only=query_only)

    @classmethod
    async def open(cls, url: str, *, query_only: bool = False, timeout: float = CONNECT_TIMEOUT_S) -> PgStore:
        return await anyio.to_thread.run_sync(lambda: cls.open_sync(url, query_only=query_only, timeout=timeout))

    async def __aenter__(self) -> PgStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def write_sync(self, fn: Callable[[PgConnection], T]) -> T:
        """Run `fn(conn)` in one transaction; again, from the start, when another writer's row took a key it
        meant to add (`WRITE_ATTEMPTS` in all)."""
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                return self._run(fn, "write", read=False)
            except psycopg.errors.UniqueViolation:
                if attempt == WRITE_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    async def write(self, fn: Callable[[PgConnection], T]) -> T:
        return await anyio.to_thread.run_sync(self.write_sync, fn)

    def read_sync(self, fn: Callable[[PgConnection], T]) -> T:
        """Run `fn(conn)` in one read-only transaction on a consistent snapshot."""
        return self._run(fn, "read", read=True)

    async def read(self, fn: Callable[[PgConnection], T]) -> T:
        return await anyio.to_thread.run_sync(self.read_sync, fn, limiter=self._limiter)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.close()

    def _run(self, fn: Callable[[PgConnection], T], doing: str, *, read: bool) -> T:
        if self._closed:
            raise StoreError(f"the Loci home {self.location} is closed")
        try:
            with self._pool.connection() as raw:
                conn = PgConnection(raw)
                # Said in the transaction's BEGIN (one statement, not a BEGIN and a SET TRANSACTION).
                raw.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ if read else None
                raw.read_only = True if read else None
                with raw.transaction():
                    result = fn(conn)
                _refresh_statistics(raw, conn.grown)
                return result
        except psycopg.Error as exc:
            if found := translate(exc, self.location, doing):
                raise found from exc
            raise
