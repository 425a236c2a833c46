"""What was imported from where: the ledger that makes importing a file again add only what is new.

`memory_imports` has a row per imported piece of a conversation: the
conversation's key (`claude-code:<session id>`, `locomo:<sample id>`...),
the piece's ref in the transcript (a turn's id, `session:<label>` for a
session's episode, a tool record's id), and the memory node or the context
object it became. The rows are written in the same transaction as the
memories, so the ledger never claims what the graph does not hold. A forgotten
turn keeps its row: importing the file again does not bring it back.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable

import sqlite_utils
from sqlite_utils import Migrations

__all__ = ["MIGRATIONS", "SESSION", "imported", "record"]

MIGRATIONS = Migrations("imports")
SESSION = "session:"


@MIGRATIONS()
def create_import_ledger(db: sqlite_utils.Database) -> None:
    db.execute(
        "CREATE TABLE memory_imports ("
        " conversation TEXT NOT NULL, ref TEXT NOT NULL, node INTEGER, object TEXT, at REAL NOT NULL,"
        " PRIMARY KEY (conversation, ref))"
    )


def imported(conn: sqlite3.Connection, key: str) -> dict[str, int | None]:
    """ref -> node id (None for a piece kept as a context object) of what `key` has had imported."""
    rows = conn.execute("SELECT ref, node FROM memory_imports WHERE conversation = ?", [key])
    return dict(rows.fetchall())


def record(conn: sqlite3.Connection, key: str, rows: Iterable[tuple[str, int | None, str | None]]) -> None:
    """Add `(ref, node, object)` rows for `key`; a ref already there keeps its row (a session's is replaced)."""
    now = time.time()
    conn.executemany(
        "INSERT INTO memory_imports (conversation, ref, node, object, at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (conversation, ref) DO UPDATE SET node = excluded.node"
        " WHERE memory_imports.ref LIKE 'session:%'",
        [(key, ref, node, obj, now) for ref, node, obj in rows],
    )
