"""Recall: what the graph knows about a query, ranked, with the reasons.

A recall runs in four small steps, each a bounded, indexed query:

1. candidates: the best BM25 matches from FTS5 (the query's informative
   words, without the phrases that frame a question about the conversation
   itself, searched literally and stemmed, memory/graph/terms.py; terms so common
   that scoring them would cost more than they tell are left out; when every
   term is that common, the newest nodes holding them are scored instead),
   plus, when an embedder is configured, the nearest vectors (sqlite-vec,
   memory/graph/vectors.py). Without vectors the lexical part is the BM25 score over
   the best one's; with them, the two lists are fused by reciprocal rank
   (their scores are on different scales, their ranks are not);
2. spreading activation: the strongest candidates pass activation along
   their edges, one hop and then a second from the best nodes reached,
   multiplied by the edge weight and a decay per hop, so a fact linked to
   several matches rises and a linked fact with no matching word is found
   (the turn that answers a matched question, the turn that says the date;
   how strongly turns are linked is memory/graph/conversation.py's);
3. ranking: direct match + graph + recency + frequency of use (weighted 0
   by default, see `Weights`), each part
   weighted and returned, so a person can see why a node came first. A
   match in an assistant's turn counts less than one in the person's own
   (`Weights.elaboration`), unless the question asks what the assistant
   said (memory/graph/terms.py `asks_for_replies`). The graph part fills in what the direct match
   leaves: it is scaled by `1 - match`, and it never lifts a node past a
   share of the best direct match (`Weights.context`), so a node's context
   lifts its neighbours above weak matches without pushing the best matches
   themselves down, and the best direct match stays first: the graph
   orders what follows it (a `lead` part lifts it back above a node the
   graph had put first, unless that node has helped a run succeed). In the first places, a turn its session's
   episode lifted yields to a better match of a session not yet placed, and to a match of the person's that
   holds more of the query's terms (memory/graph/spread_sessions.py). A later
   turn that restates a match with a new value moves just above it (memory/graph/newer.py);
4. recording: the returned nodes and the edges between them count one use
   (`uses`, `last_used`), which the frequency and recency parts then read;
   on a home opened read-only nothing is recorded, and recall still answers.

Every step reads a bounded number of rows (LIMIT on FTS5, capped fan-out),
so a recall costs the same on ten thousand nodes as on a million edges.
"""

from __future__ import annotations

from collections.abc import Iterable

import anyio
import anyio.to_thread
import sqlite_utils

from loci.memory.errors import UsageError
from loci.memory.graph.fts.index import text_index
from loci.memory.graph.graph import Graph
from loci.memory.graph.ranking import DOC_BUDGET, Ranking, Recalled, Weights
from loci.memory.graph.records import check_kinds
from loci.memory.graph.terms import asks_for_replies, query_terms, searched_terms
from loci.memory.graph.vectors import VectorSearch

__all__ = ["Recall"]


class Recall:
    """Hybrid recall over one `Graph` (its project only); uses the graph's embedder when it has one."""

    def __init__(
        self,
        graph: Graph,
        weights: Weights | None = None,
        candidates: int = 40,
        spread: int = 10,
        budget: int = DOC_BUDGET,
    ) -> None:
        self.graph = graph
        self.ranking = Ranking(weights, candidates, spread, budget, graph.project)
        # Vectors are searched inside SQLite (sqlite-vec); a PostgreSQL home recalls by words.
        self._vectors = VectorSearch(graph.store.local_file) if graph.store.local_file else None

    async def recall(
        self, query: str, k: int = 5, kinds: Iterable[str] | None = None, *, record: bool = True, hops: int = 2
    ) -> list[Recalled]:
        """The top k nodes for `query`, best first, each with its score's parts."""
        if not isinstance(query, str) or not query.strip():
            raise UsageError("the recall query is empty; say what to look for")
        terms = searched_terms(query)
        wanted = check_kinds(kinds) if kinds else []
        vector = None
        if self.graph.embedder is not None:
            [vector] = await self.graph.embedder([query])
        if not terms and vector is None:
            raise UsageError(f"the query {query!r} has no words to look for")
        k = max(1, min(k, 100))

        n = max(self.ranking.candidates, 2 * k)
        project = self.graph.project
        if vector and self._vectors is None:
            raise UsageError("recall by meaning (an embedder) runs on a SQLite home only for now")
        nearest = await anyio.to_thread.run_sync(self._vectors.search, vector, n, project) if vector else []

        def read(db: sqlite_utils.Database) -> list[Recalled]:
            return self.ranking.rank(db.conn, terms, nearest, wanted, k, hops, replies=asks_for_replies(query))

        found = await self.graph.store.read_bounded(read)
        if record and found and not self.graph.store.read_only:
            ids = {r.node.id for r in found}
            edges = [r.via for r in found if r.via is not None]
            await self.graph.record_use(sorted(ids), edges)
        return found

    async def bm25(self, query: str, k: int = 10, kinds: Iterable[str] | None = None) -> list[int]:
        """Plain BM25 over the same index: the baseline recall is measured against."""
        words = query_terms(query)
        if not words:
            return []
        wanted = check_kinds(kinds) if kinds else []
        project = self.graph.project
        return await self.graph.store.read(
            lambda db: [n for n, _ in text_index(db.conn).matches(db.conn, words, wanted, k, project)]
        )
