"""Bounded reads and small writes run on the event loop's thread, and a write that would wait for another
process's lock waits in a worker thread instead, never on the loop."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import anyio
import anyio.lowlevel
import sqlite_utils

from loci.memory.engines.sqlite.store import Store


async def test_a_bounded_read_runs_on_the_callers_thread(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "loci.db") as store:
        threads = await store.read_bounded(lambda db: [threading.get_ident(), db.execute("SELECT 1").fetchone()[0]])
        assert threads == [threading.get_ident(), 1]
        assert await store.read(lambda db: threading.get_ident()) != threading.get_ident()


async def test_a_small_write_commits_on_the_callers_thread_when_the_writer_is_free(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    async with await Store.open(path) as store:

        def insert(db: sqlite_utils.Database) -> int:
            db.execute("INSERT INTO runs (task, started) VALUES ('here', 1)")
            return threading.get_ident()

        assert await store.write_bounded(insert) == threading.get_ident()
        # The writer waits for another process's lock again afterwards (its usual wait, restored).
        busy = await store.write(lambda db: db.execute("PRAGMA busy_timeout").fetchone()[0])
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT task FROM runs").fetchall() == [("here",)]
    assert busy == int(store.busy_timeout * 1000)


async def test_a_small_write_waits_in_a_worker_thread_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    async with await Store.open(path) as store:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO runs (task, started) VALUES ('first', 1)")
        ran_on: list[int] = []

        def insert(db: sqlite_utils.Database) -> None:
            db.execute("INSERT INTO runs (task, started) VALUES ('second', 2)")
            ran_on.append(threading.get_ident())

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(store.write_bounded, insert)
                await anyio.lowlevel.checkpoint()
                await anyio.wait_all_tasks_blocked()  # the write is off the loop, waiting for the lock
                other.commit()
        other.close()
        timeout = await store.write(lambda db: db.execute("PRAGMA busy_timeout").fetchone()[0])
    assert ran_on and ran_on[0] != threading.get_ident()
    assert timeout == int(store.busy_timeout * 1000)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT task FROM runs ORDER BY started").fetchall() == [("first",), ("second",)]


async def test_a_bounded_read_uses_the_writers_connection_when_no_write_holds_it(tmp_path: Path) -> None:
    """Its page cache outlives the writer's own commits (a recall's use counts), where a reader's would be dropped."""
    async with await Store.open(tmp_path / "loci.db") as store:
        wrote_on = await store.write(lambda db: db)
        assert await store.read_bounded(lambda db: db) is wrote_on
        assert await store.read(lambda db: db) is not wrote_on


async def test_a_bounded_read_during_a_write_in_another_thread_reads_only_what_was_committed(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "loci.db") as store:
        await store.write(lambda db: db.execute("INSERT INTO runs (task, started) VALUES ('committed', 1)"))
        inside, done = threading.Event(), threading.Event()

        def slow_write(db: sqlite_utils.Database) -> None:
            db.execute("INSERT INTO runs (task, started) VALUES ('under way', 2)")
            inside.set()
            done.wait(30)

        def tasks(db: sqlite_utils.Database) -> list[str]:
            return [task for (task,) in db.execute("SELECT task FROM runs ORDER BY started")]

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(store.write, slow_write)
                await anyio.to_thread.run_sync(inside.wait)
                during = await store.read_bounded(tasks)
                done.set()
        assert during == ["committed"]
        assert await store.read_bounded(tasks) == ["committed", "under way"]
