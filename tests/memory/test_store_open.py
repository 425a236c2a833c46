"""Opening the home: migrations only when some are pending, so readers never wait for a writer."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph


async def test_opening_a_migrated_home_takes_no_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    async with await Store.open(path) as store:
        await Graph(store).remember("the seed fact")
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process's writer, holding the lock
    try:
        async with await Store.open(path) as store:
            node = await Graph(store).get(1)
    finally:
        writer.rollback()
        writer.close()
    assert node.text == "the seed fact"


async def test_a_new_home_is_still_migrated(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "new.db") as store:
        tables = await store.read(lambda db: set(db.table_names()))
    assert {"memory_nodes", "memory_edges"} <= tables


def test_memory_search_answers_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    loci = [sys.executable, "-m", "loci.runtime.cli.main", "memory"]
    subprocess.run([*loci, "add", "the seed fact", "--db", str(path)], check=True, capture_output=True, timeout=120)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        found = subprocess.run(
            [*loci, "search", "seed", "--db", str(path)], capture_output=True, text=True, timeout=120
        )
    finally:
        writer.rollback()
        writer.close()
    assert found.returncode == 0, found.stderr
    assert "the seed fact" in found.stdout


def test_stores_opening_one_new_home_at_once_all_open_it_writable(tmp_path: Path) -> None:
    # Two digest jobs of a batch open the same new home together: while one turns the file to WAL, SQLite
    # answers the other "database is locked" without waiting, which must not fail (or demote) its open.
    for attempt in range(25):
        path = tmp_path / f"new-{attempt}.db"
        start = threading.Barrier(4)

        def open_it(path: Path = path, start: threading.Barrier = start) -> str:
            start.wait(timeout=30)
            store = Store.open_sync(path)
            try:
                return "writable" if not store.read_only else f"read-only: {store.read_only}"
            finally:
                store.close()

        with ThreadPoolExecutor(4) as pool:
            opened = list(pool.map(lambda _: open_it(), range(4)))
        assert opened == ["writable"] * 4, (attempt, opened)
