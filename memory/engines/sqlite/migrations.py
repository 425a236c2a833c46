"""SQLite's schema: the ordered list of sqlite-utils migration sets every home has.

`MIGRATION_SETS` names each set by the module that defines it as
`MIGRATIONS` (`memory/context/schema.py`, `memory/graph/schema.py`, ...), in
the order a new home applies them; `Store.open` (memory/engines/sqlite/store.py)
applies them in full to every file it opens, so a home has every table
whatever the caller imported. The list holds names, not the sets, because
those modules import `Store`: a name that does not resolve is an error at the
first open, never a skipped set. sqlite-utils records each migration applied
in the file itself; a shipped one is never edited. PostgreSQL's twin is
memory/engines/postgres/migrations.py, whose sets mirror these by concept.
"""

from __future__ import annotations

import importlib

from sqlite_utils import Migrations

__all__ = ["MIGRATION_SETS", "migration_sets"]

# Every migration set, in the order a new home applies them: the module that
# defines each set as `MIGRATIONS`. Adding a set is one line here.
MIGRATION_SETS = (
    "loci.memory.context.schema",
    "loci.memory.graph.schema",
    "loci.memory.records.chat",
    "loci.memory.records.runs",
    "loci.memory.evolution.schema",
    "loci.memory.jobs.schema",
    "loci.memory.records.digest_jobs",
    "loci.memory.imports.ledger",
    "loci.memory.records.tokens",
)


def migration_sets() -> list[Migrations]:
    """The sets `MIGRATION_SETS` names, imported (a missing module or set raises)."""
    return [importlib.import_module(name).MIGRATIONS for name in MIGRATION_SETS]
