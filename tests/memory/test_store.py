"""The home's schema: every migration set applies on open, whatever the caller imported; a store's writes
reach the file whatever other processes open and close on it meanwhile."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sqlite_utils

from loci.memory.engines.sqlite.migrations import MIGRATION_SETS, migration_sets
from loci.memory.engines.sqlite.store import Store

OPEN_ONLY_THE_STORE = textwrap.dedent(
    """
    import sys
    from loci.memory.engines.sqlite.store import Store

    Store.open_sync(sys.argv[1]).close()
    """
)
# Another process that reads the home and lets go of it, as `sqlite3 loci.db` or the tests' own checks do.
COUNT_RUNS = (
    "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM runs').fetchone()[0])"
)


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_store_opened_before_any_schema_module_is_imported_has_every_table(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    subprocess.run([sys.executable, "-c", OPEN_ONLY_THE_STORE, str(path)], check=True, capture_output=True)
    tables = _tables(path)
    assert {
        "context_objects",
        "memory_nodes",
        "memory_edges",
        "chat_sessions",
        "chat_messages",
        "runs",
        "jobs",
    } <= tables
    assert "digest_jobs" in tables and "memory_imports" in tables
    with sqlite3.connect(path) as conn:
        applied = {row[0] for row in conn.execute("SELECT migration_set FROM _sqlite_migrations")}
    assert applied == {"context", "graph", "chat", "runs", "evolution", "jobs", "digest", "imports", "tokens"}


def test_the_sets_apply_in_the_listed_order() -> None:
    assert [m.name for m in migration_sets()] == [
        "context",
        "graph",
        "chat",
        "runs",
        "evolution",
        "jobs",
        "digest",
        "imports",
        "tokens",
    ]
    assert len(MIGRATION_SETS) == len(set(MIGRATION_SETS))


async def test_a_home_made_before_the_jobs_set_keeps_its_queue(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    older = [m for m in migration_sets() if m.name != "jobs"]  # a home from before the queue had its own set
    store = Store(path, sqlite3.connect(path, isolation_level=None, check_same_thread=False))
    store.write_sync(lambda db: [m.apply(db) for m in older])
    store.close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO jobs (kind, key, payload, max_attempts, created, updated)"
            " VALUES ('refine', 'k', '{}', 3, 0, 0)"
        )
    async with await Store.open(path) as reopened:
        rows = await reopened.read(lambda db: db.conn.execute("SELECT kind, key, status FROM jobs").fetchall())
        applied = await reopened.read(
            lambda db: db.conn.execute(
                "SELECT name FROM _sqlite_migrations WHERE migration_set = 'jobs' ORDER BY id"
            ).fetchall()
        )
    assert rows == [("refine", "k", "queued")]
    assert applied == [("take_over_jobs_table",), ("jobs_by_project",)]


async def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    for _ in range(2):
        async with await Store.open(path):
            pass
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT migration_set, name FROM _sqlite_migrations ORDER BY id").fetchall()
    empty = sqlite_utils.Database(memory=True)
    assert rows == [(m.name, step.name) for m in migration_sets() for step in m.pending(empty)]


def test_a_listed_module_that_does_not_exist_is_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(
        "loci.memory.engines.sqlite.migrations.MIGRATION_SETS", (*MIGRATION_SETS, "loci.memory.no_such_schema")
    )
    with pytest.raises(ModuleNotFoundError, match="loci.memory.no_such_schema"):
        Store.open_sync(tmp_path / "loci.db")


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE memory_nodes SET uses = 5",
        "INSERT INTO runs (task, started) VALUES ('x', 0)",
        "CREATE TABLE extra (a)",
        "DROP TABLE runs",
        "PRAGMA user_version = 9",
        "PRAGMA journal_mode = DELETE",
        "ATTACH ':memory:' AS other",
    ],
)
async def test_a_query_only_store_reads_but_cannot_write_through_a_read(tmp_path: Path, sql: str) -> None:
    async with await Store.open(tmp_path / "loci.db") as store:
        await store.write(lambda db: db.execute("INSERT INTO runs (task, started) VALUES ('kept', 1)"))
    async with await Store.open(tmp_path / "loci.db", query_only=True) as store:
        for read in (store.read, store.read_bounded):  # a bounded read too: never on the writer's connection
            with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
                await read(lambda db: db.execute(sql))
        # Its own temporary tables it may write (recall stems words in one), and the writer still writes.
        await store.read(lambda db: db.execute("CREATE TEMP TABLE scratch (a)"))
        await store.write(lambda db: db.execute("INSERT INTO runs (task, started) VALUES ('written', 2)"))
        tasks = await store.read(lambda db: [r[0] for r in db.execute("SELECT task FROM runs ORDER BY id")])
    assert tasks == ["kept", "written"]


def _runs_seen_elsewhere(path: Path) -> int:
    done = subprocess.run([sys.executable, "-c", COUNT_RUNS, str(path)], check=True, capture_output=True, text=True)
    return int(done.stdout)


@pytest.mark.parametrize("stores", [1, 2])
def test_a_write_reaches_the_file_after_another_process_opened_and_closed_it(tmp_path: Path, stores: int) -> None:
    # SQLite's locks are POSIX locks, which a process loses on the file when it closes any descriptor of it.
    # Without its shared lock, another process closing its connection to the home takes it for the last one
    # and deletes the WAL, and this store then commits into a file no other process ever reads.
    path = tmp_path / "loci.db"
    Store.open_sync(path).close()
    opened = [Store.open_sync(path) for _ in range(stores)]  # a second one in this process, as tests and tools do
    try:
        assert _runs_seen_elsewhere(path) == 0
        opened[0].write_sync(lambda db: db.execute("INSERT INTO runs (task, started) VALUES ('kept', 1)"))
        assert _runs_seen_elsewhere(path) == 1
    finally:
        for store in opened:
            store.close()
    assert _runs_seen_elsewhere(path) == 1
