"""The `jobs` table: the queue's own migration set.

One row per job, claimed by one worker at a time (`owner`, `lease_until`),
retried after a crash up to its `max_attempts`, with the last error kept. A
job belongs to a `project` (`memory.projects`), and its `key` is unique
within the project, so queueing the same work twice (a retried feedback,
two processes) adds one job, while two projects each queue their own.

Migrations are never edited once shipped. The table was first created by the
evolution set's first migration (`memory.evolution.schema`), which every home
made so far has applied and a new home still applies before this set
(`memory.engines.sqlite.migrations.MIGRATION_SETS`). This set takes the table over: its first
migration creates it only where it is missing, and any later change to the
queue's table is added here, as the next migration of this set.
"""

from __future__ import annotations

import sqlite_utils
from sqlite_utils import Migrations

__all__ = ["JOB_STATES", "MIGRATIONS"]

JOB_STATES = ("queued", "running", "done", "failed")

MIGRATIONS = Migrations("jobs")


@MIGRATIONS()
def take_over_jobs_table(db: sqlite_utils.Database) -> None:
    db.execute(
        "CREATE TABLE IF NOT EXISTS jobs ("
        " id INTEGER PRIMARY KEY, kind TEXT NOT NULL, key TEXT NOT NULL UNIQUE, payload TEXT NOT NULL,"
        " status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed')),"
        " attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL,"
        " owner TEXT, lease_until REAL, error TEXT, result TEXT,"
        " created REAL NOT NULL, updated REAL NOT NULL, finished REAL)"
    )
    db.execute("CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status, id)")


_COLUMNS = (
    "id, kind, key, payload, status, attempts, max_attempts, owner, lease_until, error, result,"
    " created, updated, finished"
)


@MIGRATIONS()
def jobs_by_project(db: sqlite_utils.Database) -> None:
    """Every job belongs to a project, and a key is unique per project; a home's old jobs are `default`'s.

    The old table's `key` is UNIQUE in its column definition, which no ALTER
    can drop, so the table is rebuilt (SQLite's recipe: create, copy, drop,
    rename), ids kept. No table references `jobs`."""
    db.execute(
        "CREATE TABLE jobs_by_project ("
        " id INTEGER PRIMARY KEY, project TEXT NOT NULL DEFAULT 'default', kind TEXT NOT NULL,"
        " key TEXT NOT NULL, payload TEXT NOT NULL,"
        " status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed')),"
        " attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL,"
        " owner TEXT, lease_until REAL, error TEXT, result TEXT,"
        " created REAL NOT NULL, updated REAL NOT NULL, finished REAL,"
        " UNIQUE (project, key))"
    )
    db.execute(f"INSERT INTO jobs_by_project ({_COLUMNS}) SELECT {_COLUMNS} FROM jobs")
    db.execute("DROP TABLE jobs")
    db.execute("ALTER TABLE jobs_by_project RENAME TO jobs")
    db.execute("CREATE INDEX jobs_status ON jobs(status, id)")
    db.execute("CREATE INDEX jobs_project ON jobs(project, status, id)")
