"""PostgreSQL's full-text index: BM25 as FTS5 computes it, whatever the planner's statistics say."""

from __future__ import annotations

from typing import Any

from memory.engines.postgres.store import PgStore
from memory.graph.fts import postgres
from memory.graph.graph import Graph, NewNode

# The rows indexed, counted and as the triggers keep them, and the rows holding "harbor".
COUNTS = (
    "count(*) FROM memory_fts",
    "n FROM memory_fts_count",
    "doc FROM memory_vocab WHERE term = 'harbor'",
)


async def test_the_document_count_is_exact_after_stale_statistics_and_forgetting(postgres_url: str) -> None:
    async with await PgStore.open(postgres_url) as store:
        graph = Graph(store)
        await graph.add_many([NewNode(f"an early note {i}") for i in range(3)])
        await store.write(lambda conn: conn.execute("ANALYZE memory_fts"))  # the planner now believes 3 rows
        ids = [n for n, _ in await graph.add_many([NewNode(f"the harbor at dawn, log {i}") for i in range(40)])]
        await graph.forget(ids[0])

        def read(conn: Any) -> tuple[list[int], list[tuple[int, float]]]:
            counts = [conn.execute(f"SELECT {c}").fetchone()[0] for c in COUNTS]
            return counts, postgres.matches(conn, ["harbor"], [], 5)

        counts, found = await store.read(read)
    assert counts == [42, 42, 39]
    assert len(found) == 5 and ids[0] not in {node_id for node_id, _ in found}
    assert all(score > 0 for _, score in found)  # FTS5's IDF of a word in most rows: a millionth, never a failure
