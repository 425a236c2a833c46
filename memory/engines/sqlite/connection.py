"""Connections to a SQLite home: writable in WAL mode, read-only, or as immutable, and the query-only guard.

`memory/engines/sqlite/store.py` holds the one writer and the pooled readers; this module
opens the connections they use. A writable connection turns the file to WAL
(asked again within the busy timeout: while one connection does that, SQLite
answers another "database is locked" at once, without its busy handler); each
connection waits `busy_timeout` for another process's lock, and a writable
one commits with `synchronous=NORMAL`. A file this process cannot write is
opened read-only, or as immutable when its directory cannot hold the WAL's
side files (`open_read_only`); `unwritable` says why without opening the file.
`reads_only` is the SQLite authorizer of a `query_only` store's readers.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from pathlib import Path

from loci.memory.engines.sqlite.health import is_busy, is_damage, translate
from loci.memory.errors import StoreError

__all__ = ["BUSY_TIMEOUT_S", "busy_timeout_s", "connect", "connect_wal", "open_read_only", "reads_only", "unwritable"]

BUSY_TIMEOUT_S = 30.0
log = logging.getLogger("loci.store")


def busy_timeout_s() -> float:
    """How long a statement waits for another process's lock: `$LOCI_BUSY_TIMEOUT` seconds, else
    `BUSY_TIMEOUT_S` (30). Past it the call fails with `StoreUnavailable`, which a server answers and a worker
    retries."""
    given = os.environ.get("LOCI_BUSY_TIMEOUT", "").strip()
    try:
        return max(0.0, float(given)) if given else BUSY_TIMEOUT_S
    except ValueError:
        log.warning("LOCI_BUSY_TIMEOUT=%r is not a number of seconds; waiting %g s", given, BUSY_TIMEOUT_S)
        return BUSY_TIMEOUT_S


# What a query-only reader may not do to the home itself; its own temporary tables (recall's stemmer) it may.
_WRITES = frozenset(
    {
        sqlite3.SQLITE_INSERT,
        sqlite3.SQLITE_UPDATE,
        sqlite3.SQLITE_DELETE,
        sqlite3.SQLITE_CREATE_TABLE,
        sqlite3.SQLITE_CREATE_INDEX,
        sqlite3.SQLITE_CREATE_TRIGGER,
        sqlite3.SQLITE_CREATE_VIEW,
        sqlite3.SQLITE_CREATE_VTABLE,
        sqlite3.SQLITE_DROP_TABLE,
        sqlite3.SQLITE_DROP_INDEX,
        sqlite3.SQLITE_DROP_TRIGGER,
        sqlite3.SQLITE_DROP_VIEW,
        sqlite3.SQLITE_DROP_VTABLE,
        sqlite3.SQLITE_ALTER_TABLE,
    }
)
# Pragmas that change only the connection (sqlite-utils sets recursive_triggers on each Database it wraps).
_CONNECTION_PRAGMAS = frozenset({"recursive_triggers", "busy_timeout", "foreign_keys", "synchronous", "cache_size"})


def reads_only(action: int, arg1: str | None, arg2: str | None, database: str | None, source: str | None) -> int:
    """A SQLite authorizer: writes to the home are denied, and so are ATTACH and setting a pragma of the file."""
    # Creating a temporary virtual table updates the schema table, which SQLite itself lets no statement touch.
    if action in _WRITES and database != "temp" and not (action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master"):
        return sqlite3.SQLITE_DENY
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and arg2 is not None and (arg1 or "").lower() not in _CONNECTION_PRAGMAS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def connect_wal(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """A writable connection in WAL mode. While another connection is turning a new file to WAL, SQLite answers
    "database is locked" at once, without its busy handler: so this asks again, for up to `busy_timeout`."""
    deadline = time.monotonic() + busy_timeout
    pause = 0.01
    while True:
        conn = connect(path, None, busy_timeout)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return conn
        except sqlite3.Error as exc:
            conn.close()
            if not is_busy(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)  # a worker thread's wait (`Store.open` runs this off the event loop)
        pause = min(pause * 2, 0.25)


def connect(path: Path, mode: str | None = None, busy_timeout: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
    """A connection to `path`: read-write, or with `mode` "ro" (read-only) or "immutable" (no side files)."""
    # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE in write_sync).
    if mode is None:
        target, uri = str(path), False
    else:
        flag = "mode=ro" if mode == "ro" else "immutable=1"
        target, uri = f"{path.absolute().as_uri()}?{flag}", True
    conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None, timeout=busy_timeout, uri=uri)
    conn.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
    if mode is None:
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def unwritable(path: Path) -> str | None:
    """Why this process cannot write the file at `path` (sqlite3 would open it read-only in silence), or None.

    It asks access(2) and never opens the file: closing any descriptor of
    the file drops every POSIX lock this process holds on it, SQLite's
    shared lock included, and without that lock the next process to close a
    connection takes itself for the last user, checkpoints and deletes the
    WAL, and this process's later commits go to a deleted file.
    """
    if os.access(path, os.W_OK):
        return None
    if os.statvfs(path).f_flag & os.ST_RDONLY:
        return "its filesystem is mounted read-only"
    return "writing it is denied (its permissions or lsattr's immutable flag)"


def open_read_only(path: Path, cause: str, busy_timeout: float) -> tuple[sqlite3.Connection, str]:
    """The home opened for reading, after a read-write open failed with `cause`.

    Read-only first; a WAL file whose directory cannot hold the `-shm` file
    opens only as immutable, which is safe there: without that file no
    process can be writing it.
    """
    if not path.exists():
        raise StoreError(f"cannot create the Loci home {path}: {cause}")
    last = cause
    for mode in ("ro", "immutable"):
        try:
            conn = connect(path, mode, busy_timeout)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn, mode
        except sqlite3.Error as exc:
            last = str(exc)
            if (found := translate(exc, path, "open")) and is_damage(exc):
                raise found from exc
    raise StoreError(f"cannot open the Loci home {path}: {cause} (and reading it failed too: {last})")
