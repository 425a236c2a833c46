"""PostgreSQL's full-text index: BM25 as FTS5 computes it, whatever the planner's statistics say."""

from __future__ import annotations

import math
from typing import Any

from memory.engines.postgres.store import PgStore
from memory.graph.fts import postgres
from memory.graph.graph import Graph, NewNode

# The rows indexed, counted and as the triggers keep them, their lengths kept against counted, and the rows
# holding "harbor".
COUNTS = (
    "count(*) FROM memory_fts",
    "n FROM memory_fts_count",
    "len - (SELECT sum(length(tsv)) FROM memory_fts) FROM memory_fts_count",
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
    assert counts == [42, 42, 0, 39]
    assert len(found) == 5 and ids[0] not in {node_id for node_id, _ in found}
    assert all(score > 0 for _, score in found)  # FTS5's IDF of a word in most rows: a millionth, never a failure


async def test_a_match_scores_bm25_of_its_lexeme_counts_over_the_average_row_length(postgres_url: str) -> None:
    texts = [
        "the harbor at dawn",
        "harbor lights, harbor bells, harbor fog over the harbor wall",
        "a quiet street near the old mill and the harbor road",
        "bells at noon",
        "the mill by the river",
    ]
    async with await PgStore.open(postgres_url) as store:
        graph = Graph(store)
        ids = [n for n, _ in await graph.add_many([NewNode(text) for text in texts])]
        await graph.forget(ids[3])

        def read(conn: Any) -> tuple[list[list[tuple[int, float]]], list[tuple[int, dict[str, int]]]]:
            searches = [
                postgres.matches(conn, ["harbor", "bells"], [], 5),
                postgres.matches(conn, ["harbor"], [], 5),
                postgres.matches(conn, ["harbor", "bells"], [], 5, every=True),
            ]
            rows = conn.execute("SELECT rowid, tsv FROM memory_fts ORDER BY rowid").fetchall()
            counts = [(rowid, _counts(conn, tsv)) for rowid, tsv in rows]
            return searches, counts

        [found, harbor, both], counts = await store.read(read)
    assert len(counts) == 4
    average = sum(len(c) for _, c in counts) / len(counts)
    docs = {term: sum(term in c for _, c in counts) for term in ("harbor", "bell")}
    idf = {term: max(1e-6, math.log((4 - n + 0.5) / (n + 0.5))) for term, n in docs.items()}

    def expected(terms: set[str], every: bool = False) -> dict[int, float]:
        scores = {}
        for rowid, c in counts:
            d = postgres.K1 * (1 - postgres.B) + postgres.K1 * postgres.B / average * len(c)
            parts = [idf[t] * c[t] * (postgres.K1 + 1) / (c[t] + d) for t in sorted(terms) if t in c]
            if parts and (not every or len(parts) == len(terms)):
                scores[rowid] = sum(parts)
        return scores

    assert found[0][0] == ids[1]  # the row that repeats "harbor" four times and holds "bells"
    for search, scores in (
        (found, expected(set(idf))),
        (harbor, expected({"harbor"})),
        (both, expected(set(idf), True)),
    ):
        assert [node_id for node_id, _ in search] == sorted(scores, key=lambda r: (-scores[r], r))
        for node_id, score in search:
            assert abs(score - scores[node_id]) < 1e-9


def _counts(conn: Any, tsv: str) -> dict[str, int]:
    """Each lexeme of a row's tsvector and how many positions it has."""
    rows = conn.execute("SELECT lexeme, cardinality(positions) FROM unnest(CAST(? AS tsvector))", [tsv])
    return dict(rows.fetchall())
