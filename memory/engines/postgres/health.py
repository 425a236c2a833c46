"""The home's health on PostgreSQL: what a failing psycopg call means, and `loci doctor --db postgresql://…`.

psycopg's errors are translated in one place, `translate` (the twin of
SQLite's, memory/engines/sqlite/health.py): a server that cannot be reached
or that drops the connection is a `StoreError` naming the database (without
its password), `StoreUnavailable` when the server is down, restarting or
dropped the connection (`unavailable`); any other error is a bug in the SQL
and propagates. The store (memory/engines/postgres/store.py) and the
listener (memory/engines/postgres/listen.py) both call it.

`check_postgres` is the doctor's check of a home opened as every command
opens it (`open_engine`: one connection, then the migrations under their
advisory lock), so a wrong host, user, password or database fails in the
same one line before it runs. It reads the server's version, the migrations
applied, and the rows of each table Loci made; a table of a listed set that
is missing is a problem (exit 1), which only a database changed by hand can
show.
"""

from __future__ import annotations

from typing import Any

import psycopg

from loci.memory.engines.base import Engine
from loci.memory.engines.postgres.connection import PgConnection
from loci.memory.errors import StoreError, StoreUnavailable

__all__ = ["TABLES", "check_postgres", "first_line", "translate", "unavailable"]

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


def unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the server cannot be reached or dropped the connection (no SQLSTATE: the client's own
    error; class 08, a connection exception; 57P, the server shutting down or starting), not that a query
    failed."""
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate or ""
    return not state or state.startswith(("08", "57P"))


def translate(exc: psycopg.Error, location: str, doing: str) -> StoreError | None:
    """The one-line `StoreError` for a database that cannot be reached or went away (`StoreUnavailable`, which
    says so); None for other errors."""
    if unavailable(exc):
        return StoreUnavailable(
            f"cannot {doing} the Loci home {location}: the database is unavailable ({first_line(exc)})"
        )
    if isinstance(exc, psycopg.OperationalError):
        return StoreError(f"cannot {doing} the Loci home {location}: {first_line(exc)}")
    return None


def first_line(exc: Exception) -> str:
    """The first line of psycopg's message, which names the server and the cause; spaces folded."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return " ".join(lines[0].split()) if lines else type(exc).__name__


async def check_postgres(store: Engine) -> dict[str, Any]:
    """What `loci doctor --db URL` prints of the open home `store`: the server, the migrations applied, each
    table's rows, the problems."""
    return await store.read(_facts) | {"path": store.location}


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
