"""Recall: what the graph knows about a query, ranked, with the reasons.

A recall runs in four small steps, each a bounded, indexed query:

1. candidates: the best BM25 matches from FTS5 (the query's words, searched
   literally, stop words dropped, and terms so common that scoring them
   would cost more than they tell left out; when every term is that common,
   the newest nodes holding them are scored instead), plus the nearest
   vectors when an embedder is configured;
2. spreading activation: the strongest candidates pass activation along
   their edges, one hop and then a second from the best nodes reached,
   multiplied by the edge weight and a decay per hop, so a fact linked to
   several matches rises and a linked fact with no matching word is found;
3. ranking: lexical + vector + graph + recency + frequency of use, each part
   weighted and returned, so a person can see why a node came first;
4. recording: the returned nodes and the edges between them count one use
   (`uses`, `last_used`), which the frequency and recency parts then read.

Every step reads a bounded number of rows (LIMIT on FTS5, capped fan-out),
so a recall costs the same on ten thousand nodes as on a million edges.
"""

from __future__ import annotations

import math
import re
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import sqlite_utils

from memory.embed import VectorIndex
from memory.errors import UsageError
from memory.fulltext import fts_phrase
from memory.graph import Graph, adjacent_edges
from memory.graph_ops import fetch_nodes
from memory.graph_schema import Node, check_kinds
from memory.params import in_chunks

__all__ = ["Recall", "Recalled", "Weights", "match_expression", "query_terms", "selective_terms"]

STOP_WORDS = frozenset(
    "a about after again all am an and any are as at be been before being between both but by can could did do"
    " does doing down during each few for from had has have having he her here hers him his how i if in into is"
    " it its just me more most my no nor not now of off on once only or other our out over own same she should"
    " so some such than that the their them then there these they this those through to too under until up very"
    " was we were what when where which while who whom why will with would you your".split()
)
MAX_TERMS = 32
DOC_BUDGET = 5_000
_WORD = re.compile(r"[\w][\w\-]*", re.UNICODE)


@dataclass(frozen=True)
class Weights:
    """How much each part counts; every part is in [0, 1] before weighting."""

    lexical: float = 1.0
    vector: float = 1.0
    graph: float = 0.6
    recency: float = 0.1
    frequency: float = 0.1
    decay: float = 0.5
    half_life_days: float = 30.0


@dataclass(frozen=True)
class Recalled:
    """One recalled node, its score and the weighted parts that sum to it."""

    node: Node
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    via: int | None = None


def query_terms(query: str) -> list[str]:
    """The query's distinct words, case-folded; stop words dropped unless nothing else is left."""
    words = [w.strip("-_") for w in _WORD.findall(query.casefold())]
    words = list(dict.fromkeys(w for w in words if w))
    return ([w for w in words if w not in STOP_WORDS] or words)[:MAX_TERMS]


def match_expression(query: str | list[str]) -> str | None:
    """An FTS5 query that matches any of the query's words literally, or None if it has none.

    Each word is quoted, so FTS5 syntax in the query (`NEAR(`, `*`, `"`, `AND`) is
    searched as text."""
    terms = query_terms(query) if isinstance(query, str) else query
    return " OR ".join(fts_phrase(w) for w in terms) or None


def selective_terms(conn: sqlite3.Connection, terms: list[str], budget: int = DOC_BUDGET) -> tuple[list[str], bool]:
    """The rarest terms whose documents add up to at most `budget` (always at least one),
    and whether even those are over the budget.

    A term found in a large share of the nodes adds little to BM25 but costs a
    score for every node it is in; leaving it out keeps a recall's cost bounded
    by the budget, not by the size of the graph."""
    counted = []
    for term in terms:
        row = conn.execute("SELECT doc FROM memory_vocab WHERE term = ?", [term]).fetchone()
        counted.append((row[0] if row else 0, term))
    counted.sort()
    kept, total = [], 0
    for docs, term in counted:
        if kept and total + docs > budget:
            break
        kept.append(term)
        total += docs
    return kept, total > budget


class Recall:
    """Hybrid recall over one `Graph`; uses the graph's embedder when it has one."""

    def __init__(
        self, graph: Graph, weights: Weights | None = None, candidates: int = 40, spread: int = 10, budget: int = DOC_BUDGET
    ) -> None:
        self.graph = graph
        self.budget = budget
        self.weights = weights or Weights()
        self.candidates = candidates
        self.spread = spread
        self._vectors = VectorIndex()

    async def recall(
        self, query: str, k: int = 5, kinds: Iterable[str] | None = None, *, record: bool = True, hops: int = 2
    ) -> list[Recalled]:
        """The top k nodes for `query`, best first, each with its score's parts."""
        if not isinstance(query, str) or not query.strip():
            raise UsageError("the recall query is empty; say what to look for")
        terms = query_terms(query)
        wanted = check_kinds(kinds) if kinds else []
        vector = None
        if self.graph.embedder is not None:
            [vector] = await self.graph.embedder([query])
        if not terms and vector is None:
            raise UsageError(f"the query {query!r} has no words to look for")
        k = max(1, min(k, 100))

        def read(db: sqlite_utils.Database) -> list[Recalled]:
            return self._rank(db.conn, terms, vector, wanted, k, hops)

        found = await self.graph.store.read(read)
        if record and found:
            ids = {r.node.id for r in found}
            edges = [r.via for r in found if r.via is not None]
            await self.graph.record_use(sorted(ids), edges)
        return found

    async def bm25(self, query: str, k: int = 10) -> list[int]:
        """Plain BM25 over the same index: the baseline recall is measured against."""
        match = match_expression(query)
        if match is None:
            return []
        return await self.graph.store.read(lambda db: [n for n, _ in _lexical(db.conn, match, [], k)])

    def _rank(
        self, conn: sqlite3.Connection, terms: list[str], vector: list[float] | None, kinds: list[str], k: int, hops: int
    ) -> list[Recalled]:
        w = self.weights
        n = max(self.candidates, 2 * k)
        lexical = _normalised(_candidates(conn, terms, kinds, n, self.budget) if terms else [])
        vectors = {i: max(0.0, s) for i, s in self._vectors.search(conn, vector, n)} if vector else {}
        base = {i: w.lexical * lexical.get(i, 0.0) + w.vector * vectors.get(i, 0.0) for i in {*lexical, *vectors}}
        graph, via = self._spread(conn, base, hops)
        reached = sorted((i for i in graph if i not in base), key=lambda i: -graph[i])[:n]
        now = time.time()
        scored: list[tuple[float, int, dict[str, float]]] = []
        for node_id, kind, uses, last_used, updated in _scoring_rows(conn, [*base, *reached]):
            if kinds and kind not in kinds:
                continue
            parts = {
                "lexical": w.lexical * lexical.get(node_id, 0.0),
                "vector": w.vector * vectors.get(node_id, 0.0),
                "graph": w.graph * min(1.0, graph.get(node_id, 0.0)),
                "recency": w.recency * _recency(max(last_used or 0.0, updated), now, w.half_life_days),
                "frequency": w.frequency * (1.0 - 1.0 / (1.0 + math.log1p(uses))),
            }
            parts = {name: round(value, 4) for name, value in parts.items()}
            scored.append((round(sum(parts.values()), 4), node_id, parts))
        scored.sort(key=lambda item: (-item[0], item[1]))
        nodes = fetch_nodes(conn, [node_id for _, node_id, _ in scored[:k]])
        return [Recalled(nodes[i], score, parts, via.get(i)) for score, i, parts in scored[:k] if i in nodes]

    def _spread(self, conn: sqlite3.Connection, base: dict[int, float], hops: int) -> tuple[dict[int, float], dict[int, int]]:
        """Activation reaching each node from the strongest candidates, and the edge it mostly came by."""
        activation: dict[int, float] = {}
        via: dict[int, tuple[float, int]] = {}
        sources = dict(sorted(base.items(), key=lambda item: -item[1])[: self.spread])
        spent: set[int] = set()
        for _ in range(max(0, min(hops, 2))):
            if not sources:
                break
            spent.update(sources)
            reached: dict[int, float] = {}
            for edge in adjacent_edges(conn, list(sources)):
                if edge.src == edge.dst:
                    continue
                for src, dst in ((edge.src, edge.dst), (edge.dst, edge.src)):
                    if src not in sources or (dst in spent and dst not in sources):
                        continue
                    amount = sources[src] * edge.weight * self.weights.decay
                    reached[dst] = reached.get(dst, 0.0) + amount
                    if amount > via.get(dst, (0.0, 0))[0]:
                        via[dst] = (amount, edge.id)
            for node_id, amount in reached.items():
                activation[node_id] = activation.get(node_id, 0.0) + amount
            fresh = {i: a for i, a in reached.items() if i not in spent}
            sources = dict(sorted(fresh.items(), key=lambda item: -item[1])[: self.spread])
        return activation, {node_id: edge_id for node_id, (_, edge_id) in via.items()}


def _candidates(
    conn: sqlite3.Connection, terms: list[str], kinds: list[str], limit: int, budget: int
) -> list[tuple[int, float]]:
    """BM25 candidates for the query's selective terms.

    When even the rarest term is in more nodes than the budget, scoring them all
    would cost as much as the graph is large; then the newest nodes holding all
    the terms (or, failing enough of those, any selective term) are scored instead."""
    kept, crowded = selective_terms(conn, terms, budget)
    if not crowded:
        return _lexical(conn, match_expression(kept) or "", kinds, limit)
    everything = " AND ".join(f"({match_expression([t])})" for t in terms)
    found = _lexical(conn, everything, kinds, limit, newest=True)
    if len(found) < limit:
        seen = {node_id for node_id, _ in found}
        extra = _lexical(conn, match_expression(kept) or "", kinds, limit, newest=True)
        found += [(node_id, score) for node_id, score in extra if node_id not in seen][: limit - len(found)]
    return found


def _lexical(
    conn: sqlite3.Connection, match: str, kinds: list[str], limit: int, newest: bool = False
) -> list[tuple[int, float]]:
    """`(node id, BM25 score)` of the best matches (or of the newest, without ranking them all); higher is better."""
    sql = "SELECT f.rowid, -bm25(memory_fts) FROM memory_fts f"
    params: list[object] = [match]
    if kinds:
        sql += f" JOIN memory_nodes n ON n.id = f.rowid WHERE memory_fts MATCH ? AND n.kind IN ({','.join('?' * len(kinds))})"
        params += kinds
    else:
        sql += " WHERE memory_fts MATCH ?"
    sql += " ORDER BY f.rowid DESC LIMIT ?" if newest else " ORDER BY rank LIMIT ?"
    params.append(limit)
    return [(row[0], row[1]) for row in conn.execute(sql, params)]


def _normalised(scores: list[tuple[int, float]]) -> dict[int, float]:
    top = max((s for _, s in scores), default=0.0)
    return {i: (s / top if top > 0 else 0.0) for i, s in scores}


def _recency(last: float, now: float, half_life_days: float) -> float:
    age_days = max(0.0, now - last) / 86_400
    return 0.5 ** (age_days / half_life_days)


def _scoring_rows(conn: sqlite3.Connection, ids: list[int]) -> list[tuple[int, str, int, float | None, float]]:
    """Only what ranking needs, for the live nodes among `ids`: (id, kind, uses, last_used, updated)."""
    rows: list[tuple[int, str, int, float | None, float]] = []
    for chunk, marks in in_chunks(ids):
        sql = f"SELECT id, kind, uses, last_used, updated FROM memory_nodes WHERE id IN ({marks}) AND deleted IS NULL"
        rows.extend(conn.execute(sql, chunk).fetchall())
    return rows
