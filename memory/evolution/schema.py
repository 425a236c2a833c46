"""The tables the memory's evolution adds to the home.

The first migration, as shipped, also created `jobs`, the background queue;
migrations are never edited, so it still does in a new home, and the queue's
own set (`memory.jobs.schema`, applied next) owns the table from then on.

`memory_episodes` indexes the episodic nodes: the run an episode came from,
its outcome (NULL until feedback arrives: unknown, not a success), its
feedback, and the signature of its step sequence, which distillation groups
episodes by.

`memory_edges.consolidated` is when consolidation last applied decay to an
edge; decay applies whole periods since then, which is what makes a second
pass right after the first change nothing.
"""

from __future__ import annotations

import sqlite_utils
from sqlite_utils import Migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = Migrations("evolution")  # after the graph's and the runs' sets (memory/engines/sqlite/migrations.py)


@MIGRATIONS()
def create_evolution_tables(db: sqlite_utils.Database) -> None:
    db.execute(
        "CREATE TABLE jobs ("
        " id INTEGER PRIMARY KEY, kind TEXT NOT NULL, key TEXT NOT NULL UNIQUE, payload TEXT NOT NULL,"
        " status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed')),"
        " attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL,"
        " owner TEXT, lease_until REAL, error TEXT, result TEXT,"
        " created REAL NOT NULL, updated REAL NOT NULL, finished REAL)"
    )
    db.execute("CREATE INDEX jobs_status ON jobs(status, id)")
    db.execute(
        "CREATE TABLE memory_episodes ("
        " node INTEGER PRIMARY KEY REFERENCES memory_nodes(id), run_id INTEGER UNIQUE,"
        " signature TEXT NOT NULL, outcome REAL, feedback TEXT, feedback_at REAL, created REAL NOT NULL)"
    )
    db.execute("CREATE INDEX memory_episodes_signature ON memory_episodes(signature)")
    db.execute("ALTER TABLE memory_edges ADD COLUMN consolidated REAL")
    db.execute("CREATE INDEX memory_events_edge ON memory_events(edge) WHERE edge IS NOT NULL")
    # Distillation finds the procedure of a signature without scanning the nodes.
    db.execute(
        "CREATE INDEX memory_procedures_signature ON memory_nodes(json_extract(meta, '$.signature'))"
        " WHERE kind = 'procedural'"
    )
