"""A home on PostgreSQL: a pool of connections, each transaction in a worker thread.

`PgStore` has the face of SQLite's `Store` (memory/engines/sqlite/store.py): `open`, then
`read(fn)` and `write(fn)`, which run `fn(conn)` in a worker thread on a
connection borrowed from a psycopg pool (`PgConnection`, `?` placeholders),
and `close`. At most `CONNECTIONS` calls, reads and writes alike, hold a
thread at once, as many as the pool has connections: the calls beyond them
wait their turn on the event loop, not each in a thread of its own blocked
on the pool, whose waking and handing over of connections cost a busy server
CPU on every call. A read is one `REPEATABLE READ, READ ONLY` transaction (said in
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

A database that goes away (a restart, a lost connection, a server not
answering) is `StoreUnavailable`, never a process's end. A call waits for it
at most `WAIT_S` in all, from when it was made (its turn for a thread
included): a transaction that failed on a lost connection before its commit
was sent is run again on a fresh connection (the idle ones the pool holds are
checked first, since a restart broke them all), with a doubling pause from
`RETRY_S` (after a call that found it away, the next ones wait `DOWN_WAIT_S`,
so requests during an outage fail fast); one whose connection was lost while
it committed is in doubt, and the store asks the server, once it answers,
whether the transaction's id committed (`pg_xact_status`): committed, the
write is acknowledged; not, it is run again. Only when the server stays away
is it `StoreUnavailable`, saying the write may have been stored. So a write is
acknowledged only when it committed, and refused only when it did not (or that
could not be known, which the message says). The statistics refreshed after a
commit are best effort: their failure is logged and the committed write still
acknowledged.

`open` connects once first, directly, so a wrong host, user or database
says what the server said in one line (a pool would only time out), then
applies the pending migrations under the advisory lock
(memory/engines/postgres/migrations.py) and starts the pool. psycopg's
errors are translated in one place, `translate` (memory/engines/postgres/health.py): a server that cannot be
reached or that drops the connection is a `StoreError` naming the database
(without its password), `StoreUnavailable` when the server is down, restarting or dropped the
connection; any other error is a bug in the SQL and propagates.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread
import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from loci.memory.engines.postgres.connection import CONNECT_TIMEOUT_S, PgConnection
from loci.memory.engines.postgres.dialect import POSTGRESQL
from loci.memory.engines.postgres.health import first_line, translate, unavailable
from loci.memory.engines.postgres.listen import PgListener
from loci.memory.engines.postgres.migrations import migrate as migrate_home
from loci.memory.errors import StoreError, StoreUnavailable, UsageError
from loci.memory.location import shown

__all__ = ["CONNECTIONS", "DOWN_WAIT_S", "WAIT_S", "PgStore"]

T = TypeVar("T")
log = logging.getLogger("loci.store")

WAIT_S = 5.0  # the longest a call waits for an unavailable database before it is `StoreUnavailable`
DOWN_WAIT_S = 1.0  # ... and this once a call found it unavailable, until one succeeds
RETRY_S = 0.1  # the first pause before a transaction lost with its connection runs again; each next one doubles
READERS = 4
CONNECTIONS = READERS + 1  # the pool's, and the worker threads that may hold them at once (reads and writes alike)
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
    reads a batch's lookups by the wrong index (a batch's twins by the project's index)."""
    for table, rows in grown.items():
        if rows < ROWS_TO_ANALYZE:
            continue
        if table in VACUUMED:  # its postings' index-only scans read each new row from the table until vacuumed
            raw.execute(f"VACUUM {VACUUMED[table]}")
        seen = raw.execute("SELECT reltuples FROM pg_class WHERE oid = CAST(%s AS regclass)", [table]).fetchone()
        if seen is not None and (seen[0] < 0 or rows >= GROWTH_TO_ANALYZE * seen[0]):
            raw.execute(f"ANALYZE {table}")


class _InDoubt(Exception):
    """The connection was lost while a transaction that wrote committed: whether it did, only the server knows."""

    def __init__(self, xid: str, result: object) -> None:
        self.xid = xid
        self.result = result


class PgStore:
    """One PostgreSQL database. Use `PgStore.open(url)`; close it with `close()` or `async with`."""

    engine = "postgresql"
    dialect = POSTGRESQL
    read_only: str | None = None  # why this process cannot write the home: never known before a write fails

    def __init__(self, url: str, pool: ConnectionPool, *, query_only: bool = False, wait_s: float = WAIT_S) -> None:
        self.url = url
        self.query_only = query_only
        self.wait_s = wait_s
        self._down = False  # the last call found the database unavailable
        self._pool = pool
        self._limiter = anyio.CapacityLimiter(CONNECTIONS)
        self._closed = False

    @property
    def location(self) -> str:
        return shown(self.url)

    @property
    def local_file(self) -> None:
        return None

    @classmethod
    def open_sync(
        cls, url: str, *, query_only: bool = False, timeout: float = CONNECT_TIMEOUT_S, migrate: bool = True
    ) -> PgStore:
        """Connect to `url`, migrate it if needed (unless not `migrate`: a copy's source), and start the pool."""
        try:
            conninfo_to_dict(url)
        except psycopg.ProgrammingError as exc:
            raise UsageError(f"{shown(url)} is not a PostgreSQL connection string: {first_line(exc)}") from exc
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(timeout))) as raw:
                if migrate:
                    migrate_home(raw)
            pool = ConnectionPool(
                url, min_size=1, max_size=CONNECTIONS, open=False, name="loci", kwargs={"autocommit": True}
            )
            pool.open(wait=True, timeout=timeout)
        except psycopg.Error as exc:
            raise translate(exc, shown(url), "open") or StoreError(f"cannot open {shown(url)}: {exc}") from exc
        return cls(url, pool, query_only=query_only)

    @classmethod
    async def open(
        cls, url: str, *, query_only: bool = False, timeout: float = CONNECT_TIMEOUT_S, migrate: bool = True
    ) -> PgStore:
        return await anyio.to_thread.run_sync(
            lambda: cls.open_sync(url, query_only=query_only, timeout=timeout, migrate=migrate)
        )

    async def __aenter__(self) -> PgStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def write_sync(self, fn: Callable[[PgConnection], T], *, since: float | None = None) -> T:
        """Run `fn(conn)` in one transaction; again, from the start, when another writer's row took a key it
        meant to add (`WRITE_ATTEMPTS` in all). `since`: when the call began (its wait for the database counts
        from then)."""
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                return self._run(fn, "write", read=False, since=since)
            except psycopg.errors.UniqueViolation:
                if attempt == WRITE_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    async def write(self, fn: Callable[[PgConnection], T]) -> T:
        since = time.monotonic()
        return await anyio.to_thread.run_sync(lambda: self.write_sync(fn, since=since), limiter=self._limiter)

    def read_sync(self, fn: Callable[[PgConnection], T], *, since: float | None = None) -> T:
        """Run `fn(conn)` in one read-only transaction on a consistent snapshot."""
        return self._run(fn, "read", read=True, since=since)

    async def read(self, fn: Callable[[PgConnection], T]) -> T:
        since = time.monotonic()
        return await anyio.to_thread.run_sync(lambda: self.read_sync(fn, since=since), limiter=self._limiter)

    async def read_bounded(self, fn: Callable[[PgConnection], T]) -> T:
        """`read`: a read waits on the network, so it runs in a worker thread however small it is."""
        return await self.read(fn)

    async def write_bounded(self, fn: Callable[[PgConnection], T]) -> T:
        """`write`, in a worker thread, as `read_bounded`."""
        return await self.write(fn)

    async def listen(self, channel: str, payload: str | None = None) -> PgListener:
        """`LISTEN` on `channel` on a connection of its own (memory/engines/postgres/listen.py)."""
        return await PgListener.open(self.url, channel, payload=payload)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.close()

    def _run(self, fn: Callable[[PgConnection], T], doing: str, *, read: bool, since: float | None) -> T:
        """`fn` in one transaction, run again while the database is away (at most `WAIT_S` in all from `since`,
        its wait for a thread included)."""
        if self._closed:
            raise StoreError(f"the Loci home {self.location} is closed")
        # Once the database is known to be away, a call waits less for it: requests meanwhile fail fast.
        start = time.monotonic() if since is None else since
        deadline, pause = start + (DOWN_WAIT_S if self._down else self.wait_s), RETRY_S
        while True:
            try:
                result = self._once(fn, read, max(0.1, deadline - time.monotonic()))
                self._down = False
                return result
            except _InDoubt as doubt:
                if self._committed(doubt.xid, deadline):
                    self._down = False
                    return doubt.result  # type: ignore[return-value]
            except psycopg.Error as exc:
                if not unavailable(exc) or time.monotonic() + pause > deadline:
                    self._down = unavailable(exc)
                    if found := translate(exc, self.location, doing):
                        raise found from exc
                    raise
                log.info("the Loci home %s was unavailable (%s); trying again", self.location, first_line(exc))
                self._check_idle()
            time.sleep(pause)
            pause *= 2

    def _once(self, fn: Callable[[PgConnection], T], read: bool, wait: float) -> T:
        """One try: `fn(conn)` in a transaction on a pooled connection; `_InDoubt` when the commit was lost."""
        with self._pool.connection(timeout=wait) as raw:
            conn = PgConnection(raw)
            # Said in the transaction's BEGIN (one statement, not a BEGIN and a SET TRANSACTION).
            raw.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ if read else None
            raw.read_only = True if read else None
            xid = None
            try:
                with raw.transaction():
                    result = fn(conn)
                    if not read:  # the id of a transaction that wrote, to ask after a commit whose answer was lost
                        xid = raw.execute("SELECT pg_current_xact_id_if_assigned()").fetchone()[0]
            except psycopg.OperationalError as exc:
                if xid is not None and unavailable(exc):
                    raise _InDoubt(str(xid), result) from exc
                raise
            self._refresh(raw, conn.grown)
            return result

    def _committed(self, xid: str, deadline: float) -> bool:
        """Whether transaction `xid` committed, asked of the server until `deadline` (`StoreUnavailable` after)."""
        pause = RETRY_S
        while True:
            try:
                with self._pool.connection(timeout=max(0.1, deadline - time.monotonic())) as raw:
                    status = raw.execute("SELECT pg_xact_status(CAST(%s AS xid8))", [xid]).fetchone()[0]
                log.info("a write whose commit was cut off by the database: transaction %s %s", xid, status)
                return status == "committed"
            except psycopg.Error as exc:
                if not unavailable(exc) or time.monotonic() + pause > deadline:
                    raise StoreUnavailable(
                        f"cannot write the Loci home {self.location}: the database became unavailable while the"
                        f" write committed, and it may or may not have been stored ({first_line(exc)})",
                        in_doubt=True,
                    ) from exc
                self._check_idle()
            time.sleep(pause)
            pause *= 2

    def _check_idle(self) -> None:
        """Drop the pool's idle connections that a restart broke, so the next try gets a live one."""
        with contextlib.suppress(psycopg.Error):  # the pool reconnects in its own time
            self._pool.check()

    def _refresh(self, raw: psycopg.Connection, grown: dict[str, int]) -> None:
        """`_refresh_statistics` after a commit: its failure is logged, never the committed write's."""
        try:
            _refresh_statistics(raw, grown)
        except psycopg.Error as exc:
            log.warning("the planner's statistics of %s were not refreshed: %s", self.location, first_line(exc))
