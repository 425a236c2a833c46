"""The import ledger on PostgreSQL: SQLite's `memory_imports` (memory/imports/ledger.py), as it is today.

A row per imported piece of a conversation, in its project: what a second
import of the same conversation skips.
"""

from __future__ import annotations

from loci.memory.engines.postgres.connection import PgConnection
from loci.memory.engines.postgres.migrations import PgMigrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = PgMigrations("imports")


@MIGRATIONS()
def create_import_ledger(conn: PgConnection) -> None:
    conn.execute(
        "CREATE TABLE memory_imports ("
        " project TEXT NOT NULL DEFAULT 'default', conversation TEXT NOT NULL, ref TEXT NOT NULL,"
        " node BIGINT, object TEXT, at DOUBLE PRECISION NOT NULL, PRIMARY KEY (project, conversation, ref))"
    )
