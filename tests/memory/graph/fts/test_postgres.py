"""PostgreSQL's full-text index: BM25 as FTS5 computes it, whatever the planner's statistics say."""

from __future__ import annotations

import math
from typing import Any

from loci.memory.engines.postgres.store import PgStore
from loci.memory.graph.fts import postgres
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.projects import ALL

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


# Searches that read the postings, each beside the same search through the rows' own tsvectors.
SEARCHES = (
    (["harbor"], {}),
    (["harbor", "bells", "fog"], {}),
    (["harbor", "bells"], {"every": True}),
    (["harbor", "fog"], {"every": True, "newest": True}),
    (["bells", "mill"], {"newest": True}),
    (["harbor"], {"project": "other"}),
)


async def test_postings_rank_exactly_as_the_rows_own_text_does(postgres_url: str) -> None:
    words = ["harbor", "bells", "fog", "mill", "river", "lights", "road", "dawn"]
    texts = [" ".join(words[(i * 7 + j * 3) % len(words)] for j in range(1 + i % 5)) + f" note {i}" for i in range(60)]
    long_text = ("the quiet mill by the river " * 700) + "harbor fog at the far end"  # indexed in pieces
    async with await PgStore.open(postgres_url) as store:
        graph = Graph(store)
        ids = [n for n, _ in await graph.add_many([NewNode(text) for text in texts])]
        await Graph(store, project="other").add_many([NewNode(text) for text in texts[:10]])
        await graph.remember(long_text)
        await graph.forget(ids[3])

        def both(conn: Any) -> list[tuple[list[tuple[int, float]], list[tuple[int, float]]]]:
            found = []
            for terms, options in SEARCHES:
                project = options.get("project", ALL)
                flags = {k: v for k, v in options.items() if k != "project"}
                by_postings = postgres.matches(conn, terms, [], 8, project, **flags)
                found.append((by_postings, _by_rows(conn, terms, 8, project, **flags)))
            return found

        found = await store.read(both)
    for by_postings, by_rows in found:
        assert by_postings and by_postings == by_rows  # the same nodes, in the same order, with the same scores


async def test_postings_follow_the_rows_added_forgotten_and_copied_in(postgres_url: str) -> None:
    async with await PgStore.open(postgres_url) as store:
        graph = Graph(store)
        ids = [
            n for n, _ in await graph.add_many([NewNode(f"the harbor bells ring, harbor log {i}") for i in range(5)])
        ]
        await graph.forget(ids[0])
        same = await store.read(_postings_match_the_rows)
        # A database indexed before the postings existed gets them from its rows when it opens.
        await store.write(
            lambda conn: [
                conn.execute("DROP TABLE memory_postings"),
                conn.execute("DELETE FROM loci_migrations WHERE name = 'index_rows_listed_by_lexeme'"),
            ]
        )
    async with await PgStore.open(postgres_url) as store:
        again = await store.read(_postings_match_the_rows)
        found = await store.read(lambda conn: postgres.matches(conn, ["harbor"], [], 10))
    assert same == again == (True, 4 * 5)  # four live rows, five lexemes each: harbor, bell, ring, log, the number
    assert sorted(node_id for node_id, _ in found) == ids[1:]


def _postings_match_the_rows(conn: Any) -> tuple[bool, int]:
    """Whether `memory_postings` holds exactly each row's lexemes with their counts, lengths, kinds and projects;
    and how many it holds."""
    expected = (
        "SELECT x.lexeme, f.rowid, cardinality(x.positions), length(f.tsv), f.kind, f.project"
        " FROM memory_fts f, unnest(f.tsv) AS x"
    )
    held = "SELECT term, rowid, n, len, kind, project FROM memory_postings"
    differ = conn.execute(f"SELECT count(*) FROM (({expected}) EXCEPT ({held})) a").fetchone()[0]
    differ += conn.execute(f"SELECT count(*) FROM (({held}) EXCEPT ({expected})) a").fetchone()[0]
    return differ == 0, conn.execute("SELECT count(*) FROM memory_postings").fetchone()[0]


def _by_rows(conn: Any, words: list[str], limit: int, project: Any, **flags: bool) -> list[tuple[int, float]]:
    """The same search through the GIN index and each row's own tsvector, as a phrase search reads them."""
    params: list[Any] = []

    def mark(value: Any) -> str:
        params.append(value)
        return f"?{len(params)}"

    flags = {"every": False, "newest": False, **flags}
    sql = postgres._phrase_sql(postgres.stems(conn, words), [], project, limit, mark, **flags)
    best: dict[int, float] = {}
    for node_id, score in conn.execute(sql, params):
        best.setdefault(node_id, float(score))
    return list(best.items())[:limit]
