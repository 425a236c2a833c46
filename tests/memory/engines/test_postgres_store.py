"""The PostgreSQL home: migrated once under its advisory lock, reads that cannot write, claims that pass each
other by, and one clear line for a database that cannot be reached."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import psycopg
import pytest

from memory.engines.postgres.connection import pg_sql
from memory.engines.postgres.migrations import PG_MIGRATION_SETS, migration_sets
from memory.engines.postgres.store import PgStore
from memory.errors import StoreError, UsageError
from memory.location import is_postgres, shown
from memory.store import Store


def test_placeholders_become_psycopgs_and_quoted_text_stays() -> None:
    sql = "SELECT '?', \"a?\" FROM t WHERE x = ? AND y LIKE '50%' AND z = ?"
    assert pg_sql(sql) == "SELECT '?', \"a?\" FROM t WHERE x = %s AND y LIKE '50%%' AND z = %s"


def test_a_connection_string_is_known_even_after_a_path_folded_it() -> None:
    from pathlib import Path

    assert is_postgres("postgresql://u@h:5432/db") and is_postgres(Path("postgres://u@h/db"))
    assert not is_postgres("/tmp/postgresql/loci.db") and not is_postgres("loci.db")
    assert shown("postgresql://u:secret@h:5432/db") == "postgresql://u:***@h:5432/db"


async def test_servers_opening_a_new_database_together_migrate_it_once(postgres_url: str) -> None:
    stores: list[PgStore] = []

    async def open_one() -> None:
        stores.append(await PgStore.open(postgres_url))

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(open_one)
        try:
            applied = await stores[0].read(
                lambda conn: conn.execute("SELECT migration_set, name FROM loci_migrations ORDER BY 1, 2").fetchall()
            )
        finally:
            for store in stores:
                store.close()
    expected = sorted((m.name, name) for m in migration_sets() for name, _ in m.steps)
    assert [tuple(row) for row in applied] == expected
    assert len(migration_sets()) == len(PG_MIGRATION_SETS)


async def test_a_read_cannot_write(postgres_url: str) -> None:
    with anyio.fail_after(60):
        async with await PgStore.open(postgres_url) as store:
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                await store.read(lambda conn: conn.execute("DELETE FROM jobs"))


async def test_two_workers_claiming_at_once_take_different_jobs(postgres_url: str) -> None:
    """The first claim holds its row locked until the second has claimed: SKIP LOCKED passes it by."""
    both = threading.Barrier(2, timeout=30)
    sql = "SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"

    def claim(conn: Any) -> int:
        row = conn.execute(sql).fetchone()
        both.wait()
        conn.execute("UPDATE jobs SET status = 'running' WHERE id = ?", [row[0]])
        return row[0]

    claimed: list[int] = []

    async def worker(store: PgStore) -> None:
        claimed.append(await store.write(claim))

    with anyio.fail_after(60):
        async with await PgStore.open(postgres_url) as store:
            insert = (
                "INSERT INTO jobs (kind, key, payload, max_attempts, created, updated)"
                " VALUES ('note', ?, '{}', 3, 1, 1)"
            )
            await store.write(lambda conn: conn.executemany(insert, [("k1",), ("k2",)]))
            async with anyio.create_task_group() as group:
                group.start_soon(worker, store)
                group.start_soon(worker, store)
    assert sorted(claimed) == [1, 2]


async def test_a_database_that_cannot_be_reached_is_one_line_naming_it_without_its_password(
    postgres_server: str,
) -> None:
    url = postgres_server.rsplit("/", 1)[0].replace("postgres@", "postgres:secret@") + "/no_such_database"
    with anyio.fail_after(60), pytest.raises(StoreError) as caught:
        await PgStore.open(url)
    message = str(caught.value)
    assert "\n" not in message and "no_such_database" in message and "secret" not in message
    assert "does not exist" in message


async def test_a_connection_string_that_is_not_one_is_a_usage_error() -> None:
    with anyio.fail_after(60), pytest.raises(UsageError, match="not a PostgreSQL connection string"):
        await PgStore.open("postgresql://u@h/db?nosuchoption=1")


async def test_sqlites_store_refuses_a_connection_string_instead_of_making_a_file() -> None:
    with anyio.fail_after(10), pytest.raises(UsageError, match="keeps its home in SQLite"):
        await Store.open("postgresql://u@127.0.0.1:1/db")


async def test_a_bulk_load_leaves_the_planner_knowing_the_tables_size(postgres_url: str) -> None:
    from memory.graph.graph import Graph, NewNode

    async with await PgStore.open(postgres_url) as store:
        await Graph(store).add_many([NewNode(f"bulk fact number {i}") for i in range(1_500)])
        seen = await store.read(
            lambda conn: dict(
                conn.execute(
                    "SELECT relname, reltuples FROM pg_class WHERE relname IN ('memory_nodes', 'memory_fts')"
                ).fetchall()
            )
        )
    assert seen == {"memory_nodes": 1_500, "memory_fts": 1_500}
