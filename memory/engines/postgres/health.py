"""`loci doctor --db postgresql://…`: reach the database, migrate it, and say what it holds.

The check opens the home as every command would (`PgStore.open`: one
connection, then the migrations under their advisory lock), so a wrong
host, user, password or database fails here in the same one line. Then it
reads the server's version, the migrations applied, and the rows of each
table Loci made; a table of a listed set that is missing is a problem
(exit 1), which only a database changed by hand can show.
"""

from __future__ import annotations

from typing import Any

from loci.memory.engines.postgres.connection import PgConnection
from loci.memory.engines.postgres.store import PgStore

__all__ = ["TABLES", "check_postgres"]

TABLES = (
    "memory_nodes",
    "memory_edges",
    "memory_events",
    "memory_pieces",
    "memory_fts",
    "memory_names",
    "memory_episodes",
    "memory_imports",
    "jobs",
)


def check_postgres(url: str) -> dict[str, Any]:
    """What `loci doctor --db URL` prints: the server, the migrations applied, each table's rows, the problems."""
    store = PgStore.open_sync(url)
    try:
        return store.read_sync(_facts) | {"path": store.location}
    finally:
        store.close()


def _facts(conn: PgConnection) -> dict[str, Any]:
    server = conn.execute("SHOW server_version").fetchone()[0]
    applied = [
        f"{set_name}.{name}"
        for set_name, name in conn.execute("SELECT migration_set, name FROM loci_migrations ORDER BY applied, name")
    ]
    rows: dict[str, int] = {}
    problems: list[str] = []
    for table in TABLES:
        if conn.execute("SELECT to_regclass(?)", [table]).fetchone()[0] is None:
            problems.append(f"the table {table} is missing")
        else:
            rows[table] = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    return {"server": server, "migrations": applied, "rows": rows, "problems": problems}
