"""The PostgreSQL home: migrated once under its advisory lock, reads that cannot write, claims that pass each
other by, use counts that do not wait on a write adding nodes, two servers adding the same node or edge at once,
and one clear line for a database that cannot be reached."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import anyio.from_thread
import psycopg
import pytest

from loci.memory.engines.postgres.connection import pg_sql
from loci.memory.engines.postgres.migrations import PG_MIGRATION_SETS, migration_sets
from loci.memory.engines.postgres.store import CONNECTIONS, PgStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import StoreError, UsageError
from loci.memory.graph.ops import NewNode, insert_nodes, record_use
from loci.memory.location import is_postgres, shown


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
    from loci.memory.graph.graph import Graph, NewNode

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


async def test_a_bulk_load_leaves_the_postings_readable_from_their_index_alone(postgres_url: str) -> None:
    from loci.memory.graph.graph import Graph, NewNode

    async with await PgStore.open(postgres_url) as store:
        await Graph(store).add_many([NewNode(f"bulk fact number {i}") for i in range(1_500)])
        pages, visible = await store.read(
            lambda conn: conn.execute(
                "SELECT relpages, relallvisible FROM pg_class WHERE relname = 'memory_postings'"
            ).fetchone()
        )
    assert pages > 0 and visible == pages  # vacuumed: an index-only scan needs no row from the table


async def test_a_use_is_counted_while_another_write_is_adding_nodes(postgres_url: str) -> None:
    """A batch holds its transaction open until a recall's use count has been written: its new ids come from the
    sequence, so the count does not wait on it (a lock of the table would break the barrier)."""
    both = threading.Barrier(2, timeout=30)
    texts = [f"fact {n}" for n in range(50)]
    added: list[tuple[int, bool]] = []

    def add(conn: Any) -> None:
        added.extend(insert_nodes(conn, [NewNode(text) for text in texts], project="default"))
        both.wait()

    def use(conn: Any) -> None:
        conn.execute("SET LOCAL lock_timeout = '20s'")
        record_use(conn, [first])
        both.wait()

    with anyio.fail_after(90):
        async with await PgStore.open(postgres_url) as store:
            [(first, _)] = await store.write(lambda conn: insert_nodes(conn, [NewNode("first")], project="default"))
            async with anyio.create_task_group() as group:
                group.start_soon(store.write, add)
                group.start_soon(store.write, use)
            sql = "SELECT uses FROM memory_nodes WHERE id = ?"
            [(uses,)] = await store.read(lambda conn: conn.execute(sql, [first]).fetchall())
            [(later, _)] = await store.write(lambda conn: insert_nodes(conn, [NewNode("later")], project="default"))
    ids = [node for node, _ in added]
    assert all(created for _, created in added) and uses == 1
    assert ids == sorted(ids) and len({first, *ids}) == 51 and later > max(ids) > first


@pytest.mark.parametrize("name", [None, "Ada Lovelace"], ids=["fact", "entity"])
async def test_two_servers_adding_the_same_node_at_once_both_succeed_with_one_node(
    postgres_url: str, name: str | None
) -> None:
    """The first server adds the node and holds its transaction open until the second server's insert of the same
    key waits on it (having looked and found no twin); the first commits, and the second's write, run again, finds
    the first one's node and merges with it, as it would have on SQLite after the first."""
    from loci.memory.graph.graph import Graph

    text = name or "the deploy key is in the team vault"

    async def second(store: PgStore) -> tuple[int, bool]:
        [added] = await Graph(store).add_many([NewNode(text, name=name)])
        return added

    async with await PgStore.open(postgres_url) as one, await PgStore.open(postgres_url) as two:
        first, again = await _at_once(
            one, lambda conn: insert_nodes(conn, [NewNode(text, name=name)], project="default")[0], second(two)
        )
        sql = "SELECT id, uses FROM memory_nodes WHERE text = ? AND deleted IS NULL"
        rows = await one.read(lambda conn: conn.execute(sql, [text]).fetchall())
    node_id = first[0]
    assert (first, again) == ((node_id, True), (node_id, False))
    assert rows == [(node_id, 0 if name else 1)]  # a fact found again counts a use; an entity is the same entity


async def test_two_servers_linking_the_same_nodes_at_once_both_succeed_with_one_edge(postgres_url: str) -> None:
    from loci.memory.graph.graph import Graph
    from loci.memory.graph.ops import upsert_edge

    async with await PgStore.open(postgres_url) as one, await PgStore.open(postgres_url) as two:
        [(a, _), (b, _)] = await Graph(one).add_many([NewNode("the pump"), NewNode("the boiler")])
        first, again = await _at_once(one, lambda conn: upsert_edge(conn, a, b), Graph(two).link(a, b))
        edges = await one.read(lambda conn: conn.execute("SELECT id FROM memory_edges").fetchall())
    assert first[1] and not again[1] and again[0].id == first[0].id
    assert edges == [(first[0].id,)]


async def _at_once(store: PgStore, hold: Any, second: Any) -> tuple[Any, Any]:
    """`hold(conn)` written on `store` with its transaction kept open until `second` (another server's write of the
    same key) waits on it or is done; then both results."""
    inserted, release = anyio.Event(), anyio.Event()
    found: dict[str, Any] = {}

    def held(conn: Any) -> Any:
        result = hold(conn)
        anyio.from_thread.run_sync(inserted.set)
        anyio.from_thread.run(release.wait)
        return result

    async def first() -> None:
        found["first"] = await store.write(held)

    async def then() -> None:
        found["second"] = await second

    def waits_on_a_lock(conn: Any) -> bool:
        sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        return conn.execute(sql).fetchone()[0] > 0

    with anyio.fail_after(90):
        async with anyio.create_task_group() as group:
            group.start_soon(first)
            await inserted.wait()
            group.start_soon(then)
            while "second" not in found and not await store.read(waits_on_a_lock):
                pass
            release.set()
    return found["first"], found["second"]


async def test_calls_beyond_the_pools_connections_wait_their_turn_without_a_thread_each(postgres_url: str) -> None:
    """Three times as many reads and writes at once as the pool has connections: no more than that many worker
    threads ever run them (the rest wait on the event loop), and every call is answered."""
    peak = 0
    guard = threading.Lock()

    def slow(conn: Any) -> int:
        nonlocal peak
        with guard:
            peak = max(peak, threading.active_count())
        return conn.execute("SELECT 1 FROM pg_sleep(0.02)").fetchone()[0]

    answers: list[int] = []

    async def call(store: PgStore, n: int) -> None:
        answers.append(await (store.write if n % 2 else store.read)(slow))

    with anyio.fail_after(60):
        async with await PgStore.open(postgres_url) as store:
            await store.read(slow)  # the pool's own threads started before the count
            before = threading.active_count()
            async with anyio.create_task_group() as group:
                for n in range(3 * CONNECTIONS):
                    group.start_soon(call, store, n)
    assert answers == [1] * (3 * CONNECTIONS) and peak - before <= CONNECTIONS
