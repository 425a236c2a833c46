"""The `jobs` table: the queue's own migration set.

One row per job, claimed by one worker at a time (`owner`, `lease_until`),
retried after a crash up to its `max_attempts`, with the last error kept. A
job's `key` is unique, so queueing the same work twice (a retried feedback,
two processes) adds one job.

Migrations are never edited once shipped. The table was first created by the
evolution set's first migration (`memory.evolution.schema`), which every home
made so far has applied and a new home still applies before this set
(`memory.store.MIGRATION_SETS`). This set takes the table over: its first
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
