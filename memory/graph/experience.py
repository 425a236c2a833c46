"""Experience: a run's episode that matches a question strongly hands the facts its run used a lift that counts.

A run's episode (memory/evolution/episodes.py) is an episodic node whose text
is its task, `ground`-linked to each fact the run used; refinement sets a
failed run's links to 0 (memory/evolution/refine.py). A run's records spread
from none of the places the world's matches spread from (memory/graph/run_records.py):
passing a quarter of an episode's match along each `ground` link to every fact its run
used lifted what runs on other questions used above the evidence (`bench evolution
--data` recall@5), and fell short of the first ten where it was needed
(bench/evolution/bound.py `too_weak`). This is the one way a run lifts what it used.

An episode that matches a question nearly as well as its best direct match
says more than context does: a run asked about this before, and these facts
answered it. So `experienced` gives each fact such an episode used, and that
the question's own words do not match, the episode's whole match as its
graph activation (when that is more than spreading gave it), with the
episode as the node it came from. The graph part that follows is still capped
at the context share of the best direct match (`Weights.context`), so a fact
lifted so never passes the best match, and a fact the question matches keeps
what its own words and the graph gave it (lifting those too cost recall@1:
it reorders the matches at the top). Strong is at least `STRONG` of the best
direct match, among the matches that spread. A home with no runs has no
such episode, and ranks as before. What it gains on `bench evolution --data`,
and `STRONG` against its neighbours: docs/benchmarks.md, "Figures behind the code's choices".
"""

from __future__ import annotations

import sqlite3

from loci.memory.params import in_chunks

__all__ = ["STRONG", "experienced"]

# The share of the best direct match at which a run's episode speaks for the facts its run used.
STRONG = 0.7


def experienced(
    conn: sqlite3.Connection,
    base: dict[int, float],
    kinds: dict[int, str],
    graph: dict[int, float],
    origin: dict[int, int],
    spread: int,
) -> tuple[dict[int, float], dict[int, int]]:
    """`graph` and `origin` (from `Ranking._spread`) with the facts used by strongly matching runs lifted.

    `base` is each direct match's score, `kinds` the kind of each; `spread` how many of the best matches spread."""
    top = max(base.values(), default=0.0)
    strong = {
        i: s
        for i, s in sorted(base.items(), key=lambda item: -item[1])[:spread]
        if s >= STRONG * top > 0 and kinds.get(i) == "episodic"
    }
    if not strong:
        return graph, origin
    lifted, came = dict(graph), dict(origin)
    for chunk, marks in in_chunks(sorted(strong)):
        sql = (
            "SELECT e.src, e.dst FROM memory_edges e JOIN memory_episodes r ON r.node = e.src"
            f" WHERE e.src IN ({marks}) AND e.kind = 'ground' AND e.deleted IS NULL AND e.weight > 0"
        )
        for episode, fact in conn.execute(sql, chunk):
            if fact not in base and strong[episode] > lifted.get(fact, 0.0):
                lifted[fact], came[fact] = strong[episode], episode
    return lifted, came
