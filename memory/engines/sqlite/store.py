"""The SQLite home: one file, one writer, readers as needed.

Every persistent part of Loci (context objects, the memory graph, chat
sessions) lives in one SQLite file, readable with any SQLite tool, unless
the home is a PostgreSQL database (memory/engines/: the parts that run
there open it with `open_engine`; `Store.open` refuses a `postgresql://`
connection string in one line, so a part still on SQLite never makes a file
of it). The file
is in WAL mode, so readers never wait for the writer. All writes of this
process go through one connection behind one lock and run in
a worker thread (`Store.write`), so the event loop never blocks on disk and
two coroutines never interleave inside a transaction. Writes take the lock
with `BEGIN IMMEDIATE` and a long busy timeout (memory/engines/sqlite/connection.py's
`busy_timeout_s`: 30 s, or `$LOCI_BUSY_TIMEOUT`), so a second process on the same file (the MCP server
beside the CLI) waits its turn instead of failing with "database is locked";
a lock held past it is `StoreUnavailable`, which a server answers and a
worker retries.

Reads (`Store.read`) borrow a connection from a small pool, so a slow search
does not hold up a write. Each pooled reader keeps its sqlite-utils wrapper, whose
setup (a pragma, the plugins' functions) would otherwise run on every read.
A read of a bounded number of rows through indexes (a recall) runs on the
calling thread, the event loop's (`read_bounded`), on the writer's connection
when no write holds it (its page cache outlives its own commits, a reader's
does not), and so does a small write
(a recall's use counts, `write_bounded`) when this process's writer is free
and no other process holds the file's write lock, which it asks without a
busy wait; else that write waits its turn in a worker thread. On a machine
whose cores are shared, each of a worker thread's two switches waits for a
core and for the GIL, and together they cost more than the recall itself.
PostgreSQL's store has both too, as its `read` and `write` (they keep
their worker threads: they wait on the network). Connections are opened by
memory/engines/sqlite/connection.py. A store opened with `query_only` (the
page of `loci ui`) gives its readers an authorizer that denies every write
to the home (a connection's own temporary tables excepted): a read that
tries to write fails, and only `Store.write` changes the file.

The schema is one explicit, ordered list of sqlite-utils migration sets
(`MIGRATION_SETS`, memory/engines/sqlite/migrations.py), which `Store.open`
applies in full to every file it opens: a home has every table whatever the
caller imported.

A broken home says so in one line (`memory.engines.sqlite.health.translate`): a file this
process cannot write is still opened for reading (read-only, or as
immutable when its directory cannot hold the WAL's side files) as long as
nothing needs migrating, and a write then fails naming the file and the
cause. When a read or a write fails because the file is damaged, the store
runs the integrity checks and, if they find problems, refuses every further
write, in this process and, through a `PATH.damaged` mark beside the file
(naming the file's inode), in the next ones, with a message saying how to
recover. `loci doctor --db PATH` re-checks and lifts the mark once the file
is whole.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread
import sqlite_utils

from loci.memory.engines.sqlite.connection import (
    BUSY_TIMEOUT_S,
    busy_timeout_s,
    connect,
    connect_wal,
    open_read_only,
    reads_only,
    unwritable,
)
from loci.memory.engines.sqlite.health import integrity, is_busy, is_damage, mark_damage, marked_damage, translate
from loci.memory.engines.sqlite.migrations import migration_sets
from loci.memory.errors import StoreError, StoreUnavailable, UsageError
from loci.memory.location import NOT_ON_POSTGRES, is_postgres
from loci.memory.regular import describe_mode

__all__ = [
    "Store",
    "check_home_path",
    "default_db_path",
    "use_store",
]

T = TypeVar("T")
log = logging.getLogger("loci.store")

READERS = 4


def default_db_path() -> Path:
    """`$LOCI_HOME/loci.db`, with `LOCI_HOME` defaulting to `~/.loci`."""
    home = Path(os.environ.get("LOCI_HOME") or Path.home() / ".loci")
    return home / "loci.db"


def check_home_path(path: Path) -> Path:
    """`path` when it may be a home: a regular file or nothing yet. A folder that does not exist is created, and
    the log says so (`created the folder ...`); a directory, a FIFO, a device or a socket is a `UsageError`."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise StoreError(f"cannot open the Loci home {path}: {exc.strerror}") from exc
    if mode is not None and describe_mode(mode):
        what = describe_mode(mode)
        hint = f" such as {path / 'loci.db'}" if what == "a directory" else ""
        raise UsageError(f"{path} is {what}, not a regular file; --db takes a SQLite file path{hint}")
    if not path.parent.exists():
        try:
            path.parent.mkdir(parents=True)
        except FileExistsError:
            pass
        except OSError as exc:
            raise StoreError(f"cannot create the folder {path.parent} for the Loci home: {exc.strerror}") from exc
        log.warning("created the folder %s for the home %s", path.parent, path.name)
    return path


def use_store(db: str | os.PathLike[str] | Store) -> AbstractAsyncContextManager[Store]:
    """The home for a block: a `Store` given is the caller's, used and left open, so a caller that holds
    one never opens a second writer on its file; a path is opened here and closed when the block ends."""
    return nullcontext(db) if isinstance(db, Store) else _opened(db)


@asynccontextmanager
async def _opened(path: str | os.PathLike[str]) -> AsyncIterator[Store]:
    async with await Store.open(path) as store:
        yield store


class Store:
    """One SQLite file. Use `Store.open(path)`; close it with `close()` or `async with`."""

    engine = "sqlite"

    def __init__(
        self,
        path: Path,
        writer: sqlite3.Connection,
        read_only: str | None = None,
        read_mode: str | None = None,
        *,
        query_only: bool = False,
        busy_timeout: float = BUSY_TIMEOUT_S,
    ) -> None:
        self.path = path
        self.query_only = query_only
        self.busy_timeout = busy_timeout
        # Why this process cannot write the file, when it cannot; `read_mode` is then how it was opened.
        self.read_only = read_only
        self._read_mode = read_mode
        self._refusal = marked_damage(path)
        self._writer = sqlite_utils.Database(writer)
        self._write_lock = threading.Lock()
        self._readers: list[sqlite_utils.Database] = []
        self._pool_lock = threading.Lock()
        self._limiter = anyio.CapacityLimiter(READERS)
        self._closed = False

    @classmethod
    def open_sync(
        cls, path: str | os.PathLike[str], *, query_only: bool = False, busy_timeout: float | None = None
    ) -> Store:
        """Open (creating if needed) and migrate the home at `path`; read-only when it cannot be written.

        With `query_only`, reads cannot write. `busy_timeout` is how long a statement waits for another
        process's lock before the home is "locked by another process" (a hook waits less than a command).
        A PostgreSQL connection string is a `UsageError` (`NOT_ON_POSTGRES`): never a file named `postgresql:`."""
        if is_postgres(path):
            raise UsageError(NOT_ON_POSTGRES)
        busy_timeout = busy_timeout_s() if busy_timeout is None else busy_timeout
        path = check_home_path(Path(path).expanduser())
        sets = migration_sets()
        try:
            conn = connect_wal(path, busy_timeout)
            read_only, mode = unwritable(path), None
        except (OSError, sqlite3.Error) as exc:
            if isinstance(exc, sqlite3.Error) and is_busy(exc):  # locked, not read-only: say so, and wait no more
                raise translate(exc, path, "open") or StoreError(str(exc)) from exc
            read_only = exc.strerror if isinstance(exc, OSError) else str(exc)
            conn, mode = open_read_only(path, read_only, busy_timeout)
        store = cls(path, conn, read_only, mode, query_only=query_only, busy_timeout=busy_timeout)
        try:
            # Look before locking: with nothing pending, opening takes no write
            # lock, so a reader never waits behind another process's writer.
            # Else one IMMEDIATE transaction around every set: two processes
            # opening a new file at once apply each migration exactly once.
            if any(m.pending(store._writer) for m in sets):
                if read_only:
                    raise StoreError(
                        f"the Loci home {path} needs migrating to this version of Loci, which writes to it, "
                        f"but it cannot be written ({read_only})"
                    )
                store.write_sync(lambda db: [m.apply(db) for m in sets])
        except sqlite3.DatabaseError as exc:
            if is_damage(exc) and (found := store._failed(exc, "open", conn)) and store._refusal:
                return store  # damaged: it reads what it can (export is the way out) and refuses writes
            conn.close()
            found = translate(exc, path, "open")
            raise found or StoreError(f"{path} is not a usable Loci home: {exc}") from exc
        except StoreError:
            conn.close()
            raise
        return store

    @classmethod
    async def open(
        cls, path: str | os.PathLike[str], *, query_only: bool = False, busy_timeout: float | None = None
    ) -> Store:
        return await anyio.to_thread.run_sync(
            lambda: cls.open_sync(path, query_only=query_only, busy_timeout=busy_timeout)
        )

    @property
    def location(self) -> str:
        return str(self.path)

    @property
    def local_file(self) -> Path:
        return self.path

    async def listen(self, channel: str, payload: str | None = None) -> None:
        """None: SQLite cannot wake another process, so its readers poll."""
        return None

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def write_sync(self, fn: Callable[[sqlite_utils.Database], T]) -> T:
        """Run `fn(db)` in one `BEGIN IMMEDIATE` transaction on the writer connection."""
        self._check_writable()
        with self._write_lock:
            conn = self._writer.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise self._failed(exc, "write") or StoreUnavailable(
                    f"the Loci home {self.path} stayed locked by another process: {exc}"
                ) from exc
            return self._commit(fn)

    def _commit(self, fn: Callable[[sqlite_utils.Database], T]) -> T:
        """`fn(db)` in the transaction just begun on the writer (its lock held), committed, or rolled back."""
        conn = self._writer.conn
        try:
            result = fn(self._writer)
            conn.commit()
        except BaseException as exc:
            if conn.in_transaction:
                conn.rollback()
            if isinstance(exc, sqlite3.Error) and (found := self._failed(exc, "write", conn)):
                raise found from exc
            raise
        return result

    def _check_writable(self) -> None:
        self._check_open()
        if self._refusal:
            raise StoreError(self._refusal)
        if self.read_only:
            raise StoreError(
                f"cannot write the Loci home {self.path}: it is read-only to this process ({self.read_only}); "
                "check that it and its directory are writable (permissions, lsattr's immutable flag, the mount)"
            )

    async def write(self, fn: Callable[[sqlite_utils.Database], T]) -> T:
        """`write_sync` in a worker thread: the event loop never waits on disk."""
        return await anyio.to_thread.run_sync(self.write_sync, fn)

    def read_sync(self, fn: Callable[[sqlite_utils.Database], T]) -> T:
        """Run `fn(db)` on a reader connection (a consistent WAL snapshot)."""
        self._check_open()
        db = self._borrow()
        try:
            return self._read_on(db, fn)
        finally:
            self._give_back(db)

    def _read_on(self, db: sqlite_utils.Database, fn: Callable[[sqlite_utils.Database], T]) -> T:
        try:
            return fn(db)
        except sqlite3.Error as exc:
            if found := self._failed(exc, "read", db.conn):
                raise found from exc
            raise

    async def read(self, fn: Callable[[sqlite_utils.Database], T]) -> T:
        return await anyio.to_thread.run_sync(self.read_sync, fn, limiter=self._limiter)

    async def read_bounded(self, fn: Callable[[sqlite_utils.Database], T]) -> T:
        """`fn(db)` on the calling thread (the event loop's), for a read of a bounded number of rows through
        indexes (a recall, a lookup by name): it costs less than the two thread switches `read` adds, which on a
        busy machine wait for a core and for the GIL.

        It reads on the writer's connection when that is free, else on a pooled reader (`read_sync`). SQLite
        drops a connection's whole page cache when another connection has committed since its last read, and
        every recall commits its use counts on the writer: a pooled reader read each page of the next recall
        again (about 70 `pread`s at 10,000 nodes), while the writer's own commits leave its cache as it is. A
        read-only or `query_only` store always reads on its readers (the latter's authorizer denies writes)."""
        if self.read_only or self.query_only or not self._write_lock.acquire(blocking=False):
            return self.read_sync(fn)
        try:  # the writer is free: no write under way in another thread, so no transaction is open on it
            self._check_open()
            return self._read_on(self._writer, fn)
        finally:
            self._write_lock.release()

    async def write_bounded(self, fn: Callable[[sqlite_utils.Database], T]) -> T:
        """A small write (a recall's use counts) on the calling thread when this process's writer is free and no
        other process holds the file's write lock; else `write`, in a worker thread, waiting its turn."""
        self._check_writable()
        if not self._write_lock.acquire(blocking=False):
            return await self.write(fn)
        try:
            conn = self._writer.conn
            conn.execute("PRAGMA busy_timeout=0")  # another process writing: no wait here, on the loop
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise self._failed(exc, "write") or StoreError(str(exc)) from exc
                began = False
            else:
                began = True
            finally:
                conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
            if began:
                return self._commit(fn)
        finally:
            self._write_lock.release()
        return await self.write(fn)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._pool_lock:
            for reader in self._readers:
                reader.conn.close()
            self._readers.clear()
        with self._write_lock:
            self._writer.conn.close()

    def _failed(self, exc: sqlite3.Error, doing: str, conn: sqlite3.Connection | None = None) -> StoreError | None:
        """The `StoreError` for a failure of the file itself; on damage, check the file and refuse writes."""
        found = translate(exc, self.path, doing)
        if found is not None and conn is not None and is_damage(exc):
            problems = integrity(conn)
            if problems:
                self._refusal = mark_damage(self.path, problems)
                found = StoreError(self._refusal)
        return found

    def _borrow(self) -> sqlite_utils.Database:
        """A reader from the pool, or a new one. Each keeps its `Database` wrapper, which sets up the connection
        (a pragma, the plugins' functions) once, not on every read."""
        with self._pool_lock:
            if self._readers:
                return self._readers.pop()
        try:
            conn = connect(self.path, self._read_mode, self.busy_timeout)
        except sqlite3.Error as exc:
            raise translate(exc, self.path, "read") or StoreError(f"cannot read {self.path}: {exc}") from exc
        if self.query_only:
            conn.set_authorizer(reads_only)
        return sqlite_utils.Database(conn)

    def _give_back(self, db: sqlite_utils.Database) -> None:
        with self._pool_lock:
            if not self._closed and len(self._readers) < READERS:
                self._readers.append(db)
                return
        db.conn.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the Loci home {self.path} is closed")
