"""Ranking: recall's steps 1 to 3 (memory/graph/recall.py) on one SQLite connection, with no async and no
database library in them.

`Ranking.rank(conn, terms, nearest, kinds, k)` finds the BM25 candidates of
the query's selective terms, spreads activation along their edges, scores
what it reached, keeps the best direct match first, opens the first places
to other sessions' matches and to fuller matches of the person's own
(memory/graph/spread_sessions.py) and puts a later
restatement of a changed value before the older one (memory/graph/newer.py);
it reads a bounded number of rows and writes nothing. It stays inside one
project: candidates and scored nodes are the project's own, and edges never
cross projects (memory/graph/ops.py refuses such a link), so spreading cannot
leave it. `Recall` runs it on a reader of the `Store`; the
hook process (memory/hooks/recall.py) runs it on a read-only connection of
its own, so it starts without sqlite-utils or anyio.
"""

from __future__ import annotations

import math
import sqlite3
import time
from dataclasses import dataclass, field, replace

from loci.memory.engines.dialects import dialect_of
from loci.memory.graph.experience import experienced
from loci.memory.graph.fts.index import text_index
from loci.memory.graph.newer import WINDOW, Scored, newer_first, terms_held
from loci.memory.graph.ops import adjacent_weights, fetch_nodes
from loci.memory.graph.records import Node
from loci.memory.graph.run_records import RUN_KINDS, run_records, run_rows
from loci.memory.graph.spread_sessions import fuller_first, sessions_first
from loci.memory.graph.terms import selective_terms
from loci.memory.params import in_chunks
from loci.memory.projects import ALL

__all__ = ["ASSISTANT_SPEAKERS", "DOC_BUDGET", "Ranking", "Recalled", "Weights"]

DOC_BUDGET = 5_000
# How many more candidates recall asks for when a run's records took places among them (memory/graph/run_records.py).
RUN_WIDEN = 4
# The speakers whose turns elaborate on what the person said: a match in them counts `Weights.elaboration`.
ASSISTANT_SPEAKERS = frozenset({"assistant", "ai", "model", "bot", "chatgpt", "claude"})
# What ranking reads of a node: (id, kind, uses, last_used, updated, speaker, successes).
ScoringRow = tuple[int, str, int, float | None, float, str | None, int]


@dataclass(frozen=True)
class Weights:
    """How much each part counts; every part is in [0, 1] before weighting.

    Frequency of use counts 0 by default: every node a recall returns counts a use,
    so use rewards what is shown, not what helped, and it measured as a loss once
    memory is used.

    `elaboration` is what a match in an assistant's turn counts against one in the
    person's own (`ASSISTANT_SPEAKERS`): the assistant restates and elaborates what
    it was told, in long turns that match many queries a little, while the facts
    to recall are mostly the person's. A question that asks what the assistant
    said (`rank(..., replies=True)`, memory/graph/terms.py `asks_for_replies`)
    counts its turns in full. A matched reply still passes its whole
    activation to the turn it answered. `context` caps the graph part: a node reached
    along edges scores at most that share of the best direct match of the wanted
    kinds, so context fills in below the matches instead of displacing the best
    of them; among the matches above that share the graph still decides, so what
    experience linked to a task lifts the fact it used over its equals. (Without
    the cap, sessions of long turns lifted turns that matched little over better
    matches.)

    `corroboration` multiplies what a link passes when both its ends spread (two
    matches linked to each other each back the other). The other weights were
    chosen with links between spreading nodes counted twice, because the edges
    touching them were read once from each end, and counting them once instead
    measured lower; so the double count is this weight, and an edge counts once
    however it is read.

    The figures behind these defaults: docs/benchmarks.md, "Figures behind the code's choices"."""

    lexical: float = 1.0
    vector: float = 1.0
    graph: float = 1.5
    recency: float = 0.1
    frequency: float = 0.0
    decay: float = 0.75
    half_life_days: float = 30.0
    fusion_k: int = 60
    elaboration: float = 0.5
    context: float = 0.85
    corroboration: float = 2.0


@dataclass(frozen=True)
class Recalled:
    """One recalled node, its score and the weighted parts that sum to it."""

    node: Node
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    via: int | None = None


class Ranking:
    """How one recall ranks: its weights, how many candidates it scores and spreads from, in which project."""

    def __init__(
        self,
        weights: Weights | None = None,
        candidates: int = 40,
        spread: int = 10,
        budget: int = DOC_BUDGET,
        project: str | None = ALL,
    ) -> None:
        self.weights = weights or Weights()
        self.candidates = candidates
        self.spread = spread
        self.budget = budget
        self.project = project

    def rank(
        self,
        conn: sqlite3.Connection,
        terms: list[str],
        nearest: list[tuple[int, float]],
        kinds: list[str],
        k: int,
        hops: int,
        replies: bool = False,
    ) -> list[Recalled]:
        """The top k for a query's terms (and nearest vectors); with `replies`, the question asks what the
        assistant said, and its turns count as the person's do."""
        w = replace(self.weights, elaboration=1.0) if replies else self.weights
        n = max(self.candidates, 2 * k)
        found, runs = self._lexical_candidates(conn, terms, kinds, n)
        lexical, vectors = self._direct(found, nearest)
        # The direct part of each candidate, in the voice of its speaker, is what spreads and what caps the graph.
        rows = _scoring_rows(conn, list({*lexical, *vectors}), self.project)
        voice: dict[int, float] = {}
        base: dict[int, float] = {}
        for node_id, row in rows.items():
            voice[node_id] = mine = _voice(row[5], w)
            base[node_id] = mine * (w.lexical * lexical.get(node_id, 0.0) + w.vector * vectors.get(node_id, 0.0))
        graph, via, origin = self._spread(conn, base, hops, runs)
        graph, origin = experienced(conn, base, {i: row[1] for i, row in rows.items()}, graph, origin, self.spread)
        reached = sorted((i for i in graph if i not in base), key=lambda i: -graph[i])[:n]
        rows.update(_scoring_rows(conn, reached, self.project))
        # A run's records spread (experience) but are not what a question is about (memory/graph/run_records.py).
        runs |= run_records(conn, [i for i in reached if i in rows and rows[i][1] in RUN_KINDS], kinds)
        wanted = [i for i, row in rows.items() if i in base and i not in runs and (not kinds or row[1] in kinds)]
        ceiling = w.context * max((base[i] for i in wanted), default=0.0)
        shown = {i: row for i, row in rows.items() if i not in runs}
        scored = _scored(shown, lexical, vectors, graph, base, voice, ceiling, kinds, w)
        if scored and not rows[scored[0][1]][6]:  # the first has never helped a run succeed
            scored = _best_match_first(scored, base)
        read: dict[int, Node] = {}  # the nodes the first places' steps read, which are most of the top k: read once
        asked: set[int] = set()

        def nodes_of(ids: list[int]) -> dict[int, Node]:
            read.update(fetch_nodes(conn, [i for i in ids if i not in asked], self.project))
            asked.update(ids)
            return {i: read[i] for i in ids if i in read}

        known: dict[int, frozenset[str]] = {}  # the query terms of each node read, for both steps that count them
        if graph:
            scored, lifted = self._sessions_first(conn, scored, rows, origin)
            if lifted:
                head = nodes_of([node_id for _, node_id, _ in scored[:WINDOW]])
                scored = _fuller_first(scored, lifted, voice, terms_held(head, terms, known))
        scored = newer_first(scored, terms, nodes_of, ASSISTANT_SPEAKERS, known)
        nodes = nodes_of([node_id for _, node_id, _ in scored[:k]])
        return [Recalled(nodes[i], score, parts, via.get(i)) for score, i, parts in scored[:k] if i in nodes]

    def _lexical_candidates(
        self, conn: sqlite3.Connection, terms: list[str], kinds: list[str], n: int
    ) -> tuple[list[tuple[int, float]], set[int]]:
        """BM25 candidates of the wanted kinds, plus the best few of any kind: an episode that matches
        leads to the facts it holds even when only facts are wanted. With no kinds named, a run's records
        are an index of their own: the best `spread` of them come beside the candidates, never in their
        place. Returns the candidates and which of them are run records kept apart."""
        if not terms:
            return [], set()
        selective = selective_terms(conn, terms, self.budget)  # read once for both searches
        if not kinds:
            found, runs = self._apart(conn, terms, selective, n)
            apart = sorted(runs.items(), key=lambda item: -item[1])[: self.spread]
            world = _world_scored(conn, selective, found)
            return sorted([*world, *apart], key=lambda item: -item[1]), {node_id for node_id, _ in apart}
        # Named kinds leave out a run's records unless they name its kind; the few of any kind are as they were
        # (`bench evolution --data` measures this path, where runs beside them too cost recall).
        found = _candidates(conn, terms, selective, kinds, n, self.project)
        seen = {node_id for node_id, _ in found}
        others = _candidates(conn, terms, selective, [], self.spread, self.project)
        found = [*found, *((i, s) for i, s in others if i not in seen)]
        runs = run_records(conn, [node_id for node_id, _ in found], kinds)
        world = [item for item in found if item[0] not in runs]
        if not set(kinds) & set(RUN_KINDS):
            world = _world_scored(conn, selective, world)
        return sorted([*world, *(item for item in found if item[0] in runs)], key=lambda item: -item[1]), runs

    def _apart(
        self, conn: sqlite3.Connection, terms: list[str], selective: tuple[list[str], bool], limit: int
    ) -> tuple[list[tuple[int, float]], dict[int, float]]:
        """The best `limit` candidates of any kind that are not run records, and the run records met on the
        way. When run records took places, the search is asked again for more, `RUN_WIDEN` times as many
        each time, at most twice: bounded, and a home with no runs asks once."""
        wanted = limit
        for _ in range(3):
            found = _candidates(conn, terms, selective, [], wanted, self.project)
            runs = run_records(conn, [node_id for node_id, _ in found])
            world = [(node_id, score) for node_id, score in found if node_id not in runs]
            if len(world) >= limit or len(found) < wanted:
                break
            wanted *= RUN_WIDEN
        return world[:limit], {node_id: score for node_id, score in found if node_id in runs}

    def _direct(
        self, found: list[tuple[int, float]], nearest: list[tuple[int, float]]
    ) -> tuple[dict[int, float], dict[int, float]]:
        """Each candidate's lexical and vector match in [0, 1]: BM25 over the best's alone, reciprocal ranks
        when the two lists are fused."""
        if not nearest:
            return _normalised(found), {}
        fusion = self.weights.fusion_k

        def reciprocal(ranked: list[tuple[int, float]]) -> dict[int, float]:
            return {node_id: (fusion + 1) / (fusion + rank) for rank, (node_id, _) in enumerate(ranked, 1)}

        return reciprocal(found), reciprocal([(i, s) for i, s in nearest if s > 0])

    def _sessions_first(
        self, conn: sqlite3.Connection, scored: list[Scored], rows: dict[int, ScoringRow], origin: dict[int, int]
    ) -> tuple[list[Scored], set[int]]:
        """`scored` with the first places opened to other sessions' matches (memory/graph/spread_sessions.py), and
        the turns whose strongest lift came from their own session's episode, which yield to them (a run's
        episode, which has no session, lifts what it used as experience, not as context). A session is known by
        its episode, not by its name: two conversations both have a session "1". Sessions are read only when an
        episode lifted one of the first places."""
        head = [node_id for _, node_id, _ in scored[:WINDOW]]
        if not any(rows.get(origin.get(i, 0), ("", ""))[1] == "episodic" for i in head):
            return scored, set()
        episode_of = _session_episodes(conn, head)
        lifted = {i for i, episode in episode_of.items() if origin.get(i) == episode}
        return (sessions_first(scored, episode_of, lifted) if lifted else scored), lifted

    def _spread(
        self, conn: sqlite3.Connection, base: dict[int, float], hops: int, runs: set[int]
    ) -> tuple[dict[int, float], dict[int, int], dict[int, int]]:
        """The graph part of each node reached from the strongest candidates (a run's records among them
        spread from no place: they lift what their runs used as experience, memory/graph/experience.py), the
        edge it mostly came by, and the node that edge came from.

        Activation adds up over the edges that reach a node, times the graph
        weight, but a node never gets more than the strongest node it was reached
        from: a turn said between many matches (a hub) is context, not a better
        match than they are. Each edge counts once, however the edges were read;
        one between two spreading nodes carries `Weights.corroboration` times
        its activation each way."""
        activation: dict[int, float] = {}
        strongest: dict[int, float] = {}
        via: dict[int, tuple[float, int, int]] = {}
        sources = dict(sorted(((i, s) for i, s in base.items() if i not in runs), key=lambda item: -item[1]))
        sources = dict(list(sources.items())[: self.spread])
        spent: set[int] = set()
        decay, corroboration = self.weights.decay, self.weights.corroboration
        for _ in range(max(0, min(hops, 2))):
            if not sources:
                break
            spent.update(sources)
            reached: dict[int, float] = {}
            seen: set[int] = set()
            for edge_id, one, other, weight in adjacent_weights(conn, list(sources)):
                if one == other or edge_id in seen:
                    continue
                seen.add(edge_id)
                both = corroboration if one in sources and other in sources else 1.0
                for src, dst in ((one, other), (other, one)):
                    if src not in sources or (dst in spent and dst not in sources):
                        continue
                    strength = sources[src]
                    amount = strength * weight * decay * both
                    reached[dst] = reached.get(dst, 0.0) + amount
                    strongest[dst] = max(strongest.get(dst, 0.0), strength)
                    if amount > via.get(dst, (0.0, 0, 0))[0]:
                        via[dst] = (amount, edge_id, src)
            for node_id, amount in reached.items():
                activation[node_id] = activation.get(node_id, 0.0) + amount
            fresh = {i: a for i, a in reached.items() if i not in spent}
            sources = dict(sorted(fresh.items(), key=lambda item: -item[1])[: self.spread])
        weight = self.weights.graph
        graph: dict[int, float] = {}
        for node_id, amount in activation.items():  # min(1.0, weight * amount, strongest), without a call per node
            part = weight * amount
            part = 1.0 if part > 1.0 else part
            graph[node_id] = strongest[node_id] if strongest[node_id] < part else part
        edges = {node_id: edge_id for node_id, (_, edge_id, _) in via.items()}
        return graph, edges, {node_id: src for node_id, (_, _, src) in via.items()}


def _candidates(
    conn: sqlite3.Connection,
    terms: list[str],
    selective: tuple[list[str], bool],
    kinds: list[str],
    limit: int,
    project: str | None,
) -> list[tuple[int, float]]:
    """BM25 candidates for the query's selective terms (`selective_terms`: those kept, and whether they crowd).

    When even the rarest term is in more nodes than the budget, scoring them all
    would cost as much as the graph is large; then the newest nodes holding all
    the terms (or, failing enough of those, any selective term) are scored instead."""
    kept, crowded = selective
    matches = text_index(conn).matches
    if not crowded:
        return matches(conn, kept, kinds, limit, project)
    found = matches(conn, terms, kinds, limit, project, every=True, newest=True)
    if len(found) < limit:
        seen = {node_id for node_id, _ in found}
        extra = matches(conn, kept, kinds, limit, project, newest=True)
        found += [(node_id, score) for node_id, score in extra if node_id not in seen][: limit - len(found)]
    return found


def _world_scored(
    conn: sqlite3.Connection, selective: tuple[list[str], bool], found: list[tuple[int, float]]
) -> list[tuple[int, float]]:
    """`found`, the world's matches of the selective terms, with BM25 scores by the statistics of the world's rows
    alone, a run's records left out of them (memory/graph/run_records.py `run_rows`); as they were when no run
    record is indexed, or when the terms crowd (the newest rows holding them were scored, not the best)."""
    kept, crowded = selective
    if crowded or not found:
        return found
    scores = text_index(conn).world_scores(conn, kept, found, run_rows(conn))
    return [(node_id, scores.get(node_id, score)) for node_id, score in found]


def _best_match_first(scored: list[Scored], base: dict[int, float]) -> list[Scored]:
    """`scored` (best first) with the best direct match first: the graph orders what follows it, never what
    leads.

    Without a graph part, the first result is the node the query's own words (and meaning) match best;
    the graph then decides among the rest. A near tie at the top is where context misleads most: a session
    of many linked turns lifts one of two equal matches over the other by the company it keeps. When the
    graph put another node first, the best match gets a `lead` part that lifts it just above, so the parts
    still sum to the score and the scores still fall down the list. The caller leaves first place to a node
    that has helped a run succeed (its `successes`, read in `Ranking.rank`): that lift is experience, not the
    transcript's structure (without it, the evolving arm of `bench evolution --data` fell below the static one
    at @1)."""
    direct = [item for item in scored if item[1] in base]
    if not direct or scored[0] is (best := max(direct, key=lambda item: (item[0] - item[2]["graph"], -item[1]))):
        return scored
    lead = round(scored[0][0] - best[0] + 0.0001, 4)
    return [(round(best[0] + lead, 4), best[1], {**best[2], "lead": lead}), *(i for i in scored if i is not best)]


def _voice(speaker: object, w: Weights) -> float:
    return w.elaboration if str(speaker or "").casefold() in ASSISTANT_SPEAKERS else 1.0


def _normalised(scores: list[tuple[int, float]]) -> dict[int, float]:
    top = max((s for _, s in scores), default=0.0)
    return {i: (s / top if top > 0 else 0.0) for i, s in scores}


def _scored(
    rows: dict[int, ScoringRow],
    lexical: dict[int, float],
    vectors: dict[int, float],
    graph: dict[int, float],
    base: dict[int, float],
    voice: dict[int, float],
    ceiling: float,
    kinds: list[str],
    w: Weights,
) -> list[Scored]:
    """Each node of the wanted kinds among `rows`, scored by its weighted parts (each rounded to four places, the
    score their sum rounded), best first; among equal scores the better direct match, then the older id.

    One pass over the rows: a part that is zero for a node (no lexical or vector match, nothing reached it,
    frequency weighted 0) is 0.0 without computing it, and nodes stored in one batch share one recency."""
    now = time.time()
    recent: dict[float, float] = {}
    voices: dict[str | None, float] = {}  # the voice of each speaker, for the nodes reached along edges
    keyed: list[tuple[tuple[float, float, int], Scored]] = []
    for node_id, (_, kind, uses, last_used, updated, speaker, _) in rows.items():
        if kinds and kind not in kinds:
            continue
        mine = voice.get(node_id) or voices.get(speaker)
        if mine is None:
            mine = voices[speaker] = _voice(speaker, w)
        lex = lexical.get(node_id, 0.0)
        vec = vectors.get(node_id, 0.0)
        lex_part = round(mine * w.lexical * lex, 4) if lex else 0.0
        vec_part = round(mine * w.vector * vec, 4) if vec else 0.0
        graph_part = 0.0
        if node_id in graph:
            match = min(1.0, mine * max(lex, vec))
            own = base.get(node_id, 0.0)
            room = 1.0 if own >= ceiling else ceiling - own
            graph_part = round(min(mine * graph[node_id] * (1.0 - match), room), 4)
        last = max(last_used or 0.0, updated)
        if (recency := recent.get(last)) is None:
            recency = recent[last] = round(w.recency * 0.5 ** (max(0.0, now - last) / 86_400 / w.half_life_days), 4)
        frequency = round(w.frequency * (1.0 - 1.0 / (1.0 + math.log1p(uses))), 4) if w.frequency else 0.0
        parts = {
            "lexical": lex_part,
            "vector": vec_part,
            "graph": graph_part,
            "recency": recency,
            "frequency": frequency,
        }
        score = round(lex_part + vec_part + graph_part + recency + frequency, 4)
        keyed.append(((-score, -lex_part - vec_part, node_id), (score, node_id, parts)))
    keyed.sort(key=lambda pair: pair[0])
    return [item for _, item in keyed]


def _fuller_first(
    scored: list[Scored], lifted: set[int], voice: dict[int, float], held: dict[int, frozenset[str]]
) -> list[Scored]:
    """`scored` with a turn its session lifted yielding its first place to a fuller match of the person's
    (memory/graph/spread_sessions.py `fuller_first`), given the query terms `held` by each of the first `WINDOW`."""
    whole = {node_id for node_id in held if voice.get(node_id) == 1.0}
    return fuller_first(scored, lifted, {node_id: len(terms) for node_id, terms in held.items()}, whole)


def _session_episodes(conn: sqlite3.Connection, ids: list[int]) -> dict[int, int]:
    """The episode of each node's session among `ids` (memory/graph/conversation.py links it to its turns by a
    `ground` edge), for the nodes that have one: an episode of the session the node's own `meta` names.

    The sessions are read here, for the few nodes of the first places, with the edges that lead to their
    episodes; the scoring rows of every candidate leave them out."""
    dialect = dialect_of(conn)
    session, said = dialect.json_text("n.meta", "session"), dialect.json_text("t.meta", "session")
    found: dict[int, int] = {}
    for chunk, marks in in_chunks(ids):
        sql = (
            f"SELECT e.dst, e.src, {session}, {said} FROM memory_edges e JOIN memory_nodes n ON n.id = e.src"
            " JOIN memory_nodes t ON t.id = e.dst"
            f" WHERE e.dst IN ({marks}) AND e.kind = 'ground' AND e.deleted IS NULL"
            " AND n.kind = 'episodic' AND n.deleted IS NULL"
        )
        for node_id, episode, session_of_episode, session_of_turn in conn.execute(sql, chunk):
            if session_of_episode and session_of_episode == session_of_turn:
                found[node_id] = episode
    return found


def _scoring_rows(conn: sqlite3.Connection, ids: list[int], project: str | None) -> dict[int, ScoringRow]:
    """Only what ranking needs, by id, for the live nodes of `project` among `ids`: (id, kind, uses, last_used,
    updated, speaker, successes). A node's session is not among them: only the first places need it
    (`_session_episodes`, which reads it with their episodes' edges), not each candidate.

    The project is checked on each row read by id: asked in the WHERE clause, SQLite may read the whole
    project through its index instead of the few ids."""
    rows: dict[int, ScoringRow] = {}
    dialect = dialect_of(conn)
    speaker = dialect.json_text("meta", "speaker")
    for chunk, marks in in_chunks(ids):
        sql = (
            f"SELECT id, kind, uses, last_used, updated, {speaker}, successes, project FROM memory_nodes"
            f" WHERE id IN ({marks}) AND deleted IS NULL"
        )
        for row in conn.execute(sql, chunk):
            if project is ALL or row[7] == project:
                rows[row[0]] = row[:7]
    return rows
