"""The SQLite index's token counts: read once while the index stays as it was, read again after any write."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import sqlite_utils

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.fts.sqlite import documents, stems
from loci.memory.graph.graph import Graph

ANOTHER_WRITER = """
import sys, anyio
from loci.memory.graph.graph import Graph
from loci.memory.engines.sqlite.store import Store

async def main():
    async with await Store.open(sys.argv[1]) as store:
        await Graph(store).remember("the zebra crossed the river again")

anyio.run(main)
"""


def _counts(db: sqlite_utils.Database, asked: list[str]) -> dict[str, int]:
    db.conn.set_trace_callback(lambda sql: asked.append(sql) if "memory_vocab" in sql else None)
    try:
        tokens = [token for found in stems(db.conn, ["zebra", "river"]).values() for token in found]
        return documents(db.conn, tokens, 1_000)
    finally:
        db.conn.set_trace_callback(None)


async def test_counts_are_read_once_and_again_after_a_write_of_this_process_or_another(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    async with await Store.open(path) as store:
        graph = Graph(store)
        await graph.remember("a zebra by the river")
        asked: list[str] = []
        assert await store.read(lambda db: _counts(db, asked)) == {"zebra": 1, "river": 1}
        assert len(asked) == 2
        node, _ = await graph.remember("a river without one")
        assert await store.read(lambda db: _counts(db, asked)) == {"zebra": 1, "river": 2}
        await graph.record_use([node.id])  # the home changes, the index does not: the counts still hold
        assert await store.read(lambda db: _counts(db, asked)) == {"zebra": 1, "river": 2}
        assert len(asked) == 4

        with anyio.fail_after(60):
            await anyio.run_process([sys.executable, "-c", ANOTHER_WRITER, str(path)])
        assert await store.read(lambda db: _counts(db, asked)) == {"zebra": 2, "river": 3}
        await graph.forget(node.id)
        assert await store.read(lambda db: _counts(db, asked)) == {"zebra": 2, "river": 2}


async def test_a_transaction_counts_its_own_writes_before_it_commits(store: Store) -> None:
    graph = Graph(store)
    await graph.remember("a zebra by the river")
    assert await store.read(lambda db: _counts(db, [])) == {"zebra": 1, "river": 1}

    def write_then_count(db: sqlite_utils.Database) -> dict[str, int]:
        db.execute("INSERT INTO memory_fts (rowid, text) VALUES (-99, 'zebra zebra')")
        return _counts(db, [])

    assert await store.write(write_then_count) == {"zebra": 2, "river": 1}
