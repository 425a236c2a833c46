"""PostgreSQL's schema: ordered migration sets, applied once under an advisory lock.

A set is an ordered list of named functions (`PgMigrations`), each taking a
`PgConnection` inside the open's transaction; applied names are recorded in
`loci_migrations` (set, name, when) and a shipped function is never edited:
a change is the next function of its set. `PG_MIGRATION_SETS` lists the sets
in the order a new database applies them, by module (each defines
`MIGRATIONS`), as `memory.engines.sqlite.migrations.MIGRATION_SETS` does for SQLite. The sets
mirror SQLite's by concept, not by history: PostgreSQL starts at today's
tables, so each of its sets begins with one migration that makes them.

`migrate` looks before it locks: with nothing pending it takes no lock.
Otherwise it takes `pg_advisory_xact_lock` on one key for the whole
transaction, reads the applied names again and applies what is still
pending, so servers that start together on a new database migrate it once
(the second waits, then finds nothing to do).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import psycopg

from loci.memory.engines.postgres.connection import PgConnection

__all__ = ["MIGRATION_LOCK", "PG_MIGRATION_SETS", "PgMigrations", "migrate", "pending"]

# The advisory lock every migrating process takes (a constant: "loci" in ASCII).
MIGRATION_LOCK = 0x6C6F6369

# Every set, in the order a new database applies them.
PG_MIGRATION_SETS = (
    "loci.memory.engines.postgres.schema.graph",
    "loci.memory.engines.postgres.schema.jobs",
    "loci.memory.engines.postgres.schema.imports",
    "loci.memory.engines.postgres.schema.context",
    "loci.memory.engines.postgres.schema.records",
    "loci.memory.engines.postgres.schema.tokens",
)

Step = Callable[[PgConnection], None]


class PgMigrations:
    """One named, ordered set of migrations; `@MIGRATIONS()` adds the function below it as the next step."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.steps: list[tuple[str, Step]] = []

    def __call__(self) -> Callable[[Step], Step]:
        def add(fn: Step) -> Step:
            self.steps.append((fn.__name__, fn))
            return fn

        return add


def migration_sets() -> list[PgMigrations]:
    """The sets `PG_MIGRATION_SETS` names, imported (a missing module or set raises)."""
    return [importlib.import_module(name).MIGRATIONS for name in PG_MIGRATION_SETS]


def pending(conn: PgConnection, sets: list[PgMigrations]) -> list[tuple[str, str, Step]]:
    """`(set, name, step)` of every migration not yet applied, in order (all of them in a new database)."""
    if conn.execute("SELECT to_regclass('loci_migrations')").fetchone()[0] is None:
        done: set[tuple[str, str]] = set()
    else:
        done = set(conn.execute("SELECT migration_set, name FROM loci_migrations").fetchall())
    return [(s.name, name, step) for s in sets for name, step in s.steps if (s.name, name) not in done]


def migrate(raw: psycopg.Connection) -> list[str]:
    """Apply every pending migration on `raw` (outside a transaction), each set in order; the names applied."""
    conn = PgConnection(raw)
    sets = migration_sets()
    with raw.transaction():
        if not pending(conn, sets):
            return []
    with raw.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(?)", [MIGRATION_LOCK])
        conn.execute(
            "CREATE TABLE IF NOT EXISTS loci_migrations ("
            " migration_set TEXT NOT NULL, name TEXT NOT NULL, applied TIMESTAMPTZ NOT NULL DEFAULT now(),"
            " PRIMARY KEY (migration_set, name))"
        )
        todo = pending(conn, sets)
        for set_name, name, step in todo:
            step(conn)
            conn.execute("INSERT INTO loci_migrations (migration_set, name) VALUES (?, ?)", [set_name, name])
    return [f"{set_name}.{name}" for set_name, name, _ in todo]
