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


@MIGRATIONS()
def add_projects(db: sqlite_utils.Database) -> None:
    """A conversation imported into two projects is two imports; what a home imported before is `default`'s."""
    db.execute(
        "CREATE TABLE memory_imports_by_project ("
        " project TEXT NOT NULL DEFAULT 'default', conversation TEXT NOT NULL, ref TEXT NOT NULL,"
        " node INTEGER, object TEXT, at REAL NOT NULL, PRIMARY KEY (project, conversation, ref))"
    )
    db.execute(
        "INSERT INTO memory_imports_by_project (conversation, ref, node, object, at)"
        " SELECT conversation, ref, node, object, at FROM memory_imports"
    )
    db.execute("DROP TABLE memory_imports")
    db.execute("ALTER TABLE memory_imports_by_project RENAME TO memory_imports")


def imported(conn: sqlite3.Connection, key: str, project: str) -> dict[str, int | None]:
    """ref -> node id (None for a piece kept as a context object) of what `key` has had imported into `project`."""
    rows = conn.execute("SELECT ref, node FROM memory_imports WHERE project = ? AND conversation = ?", [project, key])
    return dict(rows.fetchall())


def record(
    conn: sqlite3.Connection, key: str, rows: Iterable[tuple[str, int | None, str | None]], project: str
) -> None:
    """Add `(ref, node, object)` rows for `key` in `project`; a ref already there keeps its row (a session's is
    replaced)."""
    now = time.time()
    conn.executemany(
        "INSERT INTO memory_imports (project, conversation, ref, node, object, at) VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (project, conversation, ref) DO UPDATE SET node = excluded.node"
        " WHERE memory_imports.ref LIKE 'session:%'",
        [(project, key, ref, node, obj, now) for ref, node, obj in rows],
    )
