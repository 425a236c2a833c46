"""Reliability: a writer killed mid-batch, two processes writing at once, hostile input.

These use real subprocesses on a real SQLite file: the guarantees under test
(WAL, BEGIN IMMEDIATE, the busy timeout, one transaction per batch) only
show between processes.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall
from loci.memory.graph.records import MAX_TEXT_CHARS

REPO = Path(__file__).resolve().parents[2]
BATCH = 2_000

WRITER = textwrap.dedent(
    """
    import sys, anyio
    from loci.memory.engines.sqlite.store import Store
    from loci.memory.graph.graph import Graph, NewNode

    async def main(path, batches, size):
        async with await Store.open(path) as store:
            graph = Graph(store)
            for b in range(batches):
                await graph.add_many([NewNode(f"batch {b} item {i} of the crash test") for i in range(size)])
                print(f"ack {b}", flush=True)

    anyio.run(main, sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
    """
)

ONE_BY_ONE = textwrap.dedent(
    """
    import sys, anyio
    from loci.memory.engines.sqlite.store import Store
    from loci.memory.graph.graph import Graph

    async def main(path, tag, count):
        async with await Store.open(path) as store:
            graph = Graph(store)
            for i in range(count):
                await graph.remember(f"process {tag} wrote fact number {i}")

    anyio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]))
    """
)


def _python(script: str, *args: object) -> list[str]:
    return [sys.executable, "-c", script, *map(str, args)]


def _count(path: Path, pattern: str) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT count(*) FROM memory_nodes WHERE text LIKE ?", [pattern]).fetchone()[0]


def test_a_writer_killed_mid_batch_loses_nothing_it_acknowledged(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    child = subprocess.Popen(
        _python(WRITER, path, 1_000, BATCH), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
    )
    acked = []
    try:
        assert child.stdout is not None
        while len(acked) < 3:
            line = child.stdout.readline()
            assert line, f"the writer stopped early: {child.stderr.read() if child.stderr else ''}"
            acked.append(int(line.split()[1]))
        os.kill(child.pid, signal.SIGKILL)  # mid-way through the next batch
    finally:
        child.kill()
        child.wait(timeout=30)
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    assert child.returncode == -signal.SIGKILL
    store = Store.open_sync(path)
    try:
        assert store.read_sync(lambda db: db.execute("PRAGMA integrity_check").fetchone()[0]) == "ok"
        store.write_sync(lambda db: db.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')"))
    finally:
        store.close()
    for b in acked:
        assert _count(path, f"batch {b} item %") == BATCH
    unacked = max(acked) + 1
    assert _count(path, f"batch {unacked} item %") in (0, BATCH)  # all of a batch, or none of it


async def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    Store.open_sync(path).close()
    results: dict[str, subprocess.CompletedProcess[bytes]] = {}

    async def writer(tag: str) -> None:
        results[tag] = await anyio.run_process(_python(ONE_BY_ONE, path, tag, 150), cwd=REPO, check=False)

    with anyio.fail_after(180):
        async with anyio.create_task_group() as group:
            for tag in ("a", "b"):
                group.start_soon(writer, tag)
    for tag, done in results.items():
        assert done.returncode == 0, done.stderr.decode()
        assert b"locked" not in done.stderr
        assert _count(path, f"process {tag} wrote fact number %") == 150


async def test_hostile_input_gives_clear_errors_or_literal_search(store: Store) -> None:
    graph = Graph(store)
    recall = Recall(graph)
    await graph.remember('a note with "quotes", NEAR(things) and stars*')
    for query in ['NEAR("a" "b"', "AND OR NOT", "note*", "col:note", "\x00note", "🙂 note", "stars* ("]:
        found = await recall.recall(query)
        assert all(r.node.text for r in found)
    for wordless in ['"', "*", "((", "^"]:
        with pytest.raises(UsageError, match="no words"):
            await recall.recall(wordless)
    for bad in ["", " \n\t "]:
        with pytest.raises(UsageError):
            await graph.remember(bad)
    with pytest.raises(UsageError, match="over the limit"):
        await graph.remember("x" * (MAX_TEXT_CHARS + 1))
    with pytest.raises(NotFoundError):
        await graph.update(123456, "text")
    with pytest.raises(NotFoundError):
        await graph.forget(123456)
