"""The context tables: objects, their chunks, and the chunks' full-text index.

The migration set lives apart from `memory.context.store` so that opening a
home (`memory.engines.sqlite.migrations.MIGRATION_SETS`) imports only the schema, not the
loaders, outlines and scanners the context store uses.

An object belongs to a project (`memory.projects`); its chunks and their
index rows belong to it through the object, so they need no column of
their own.
"""

from __future__ import annotations

import sqlite_utils
from sqlite_utils import Migrations

__all__ = ["MIGRATIONS", "context_by_project", "create_context_tables"]

MIGRATIONS = Migrations("context")


@MIGRATIONS()
def create_context_tables(db: sqlite_utils.Database) -> None:
    db.execute(
        "CREATE TABLE context_objects ("
        " id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, source TEXT,"
        " meta TEXT NOT NULL DEFAULT '{}', chars INTEGER NOT NULL DEFAULT 0,"
        " lines INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0,"
        " created REAL NOT NULL, complete INTEGER NOT NULL DEFAULT 1)"
    )
    # Reloading an unchanged file finds its object by source instead of storing it twice.
    db.execute("CREATE INDEX context_objects_source ON context_objects (source)")
    db.execute(
        "CREATE TABLE context_chunks ("
        " id INTEGER PRIMARY KEY, object_id INTEGER NOT NULL REFERENCES context_objects(id),"
        " seq INTEGER NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,"
        " start_char INTEGER NOT NULL, end_char INTEGER NOT NULL,"
        " start_token INTEGER NOT NULL, end_token INTEGER NOT NULL, text TEXT NOT NULL,"
        " UNIQUE (object_id, seq))"
    )
    db.execute(
        "CREATE VIRTUAL TABLE context_fts USING fts5("
        " text, content='context_chunks', content_rowid='id', tokenize='unicode61')"
    )
    db.execute("CREATE INDEX context_chunks_by_line ON context_chunks (object_id, end_line, seq)")
    db.execute("CREATE INDEX context_chunks_by_token ON context_chunks (object_id, end_token, seq)")


@MIGRATIONS()
def context_by_project(db: sqlite_utils.Database) -> None:
    """Every object belongs to a project; the objects of a home made before projects are `default`'s."""
    db.execute("ALTER TABLE context_objects ADD COLUMN project TEXT NOT NULL DEFAULT 'default'")
    db.execute("CREATE INDEX context_objects_project ON context_objects (project, id)")
