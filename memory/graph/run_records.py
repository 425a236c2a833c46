"""A run's records are not memories of the world: which nodes runs made, so recall keeps them apart.

A run leaves an episode (memory/evolution/episodes.py: an `episodic` node
indexed in `memory_episodes`, whose text is the run's task) and, once enough
runs succeed the same way, a procedure distilled from them
(memory/evolution/distill.py: a `procedural` node whose meta holds the
`signature` of their steps, and whose text quotes their tasks). Both hold the
words of the questions asked, so after fifty runs on a conversation every
question about it matched fifty episodes before the turn that answers it
("donated car" returned three run episodes, the turn fell out of the first
three).

So recall (memory/graph/ranking.py) reads these nodes as an index of their
own: the BM25 candidates of the world are drawn without them, and the best
few of them (as many as spread, `Ranking.spread`) come apart, so an episode that matches still
lifts the facts its run used (memory/graph/experience.py) without taking
a candidate's place, nor one of the places the world's matches spread from;
the world's matches are scored by the statistics of the world's rows alone
(`run_rows`; `world_scores` in memory/graph/fts/), so a run whose task
names a word does not lower that word's weight in every turn; and a run
record is returned only when the caller names its kind (`--kind episodic`,
`--kind procedural`). The page's overview folds
them the same way (servers/ui/graph_view.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loci.memory.engines.dialects import dialect_of
from loci.memory.params import in_chunks

__all__ = ["RUN_KINDS", "run_records", "run_rows"]

# The kinds a run's records have (not every node of these kinds is one).
RUN_KINDS = ("episodic", "procedural")


def run_records(conn: Any, ids: Sequence[int], kinds: Sequence[str] = ()) -> set[int]:
    """The ids among `ids` of nodes that runs made (episodes of runs, procedures distilled from them), but for
    those of a kind named in `kinds`: a caller that asks for episodes or procedures by kind gets them."""
    found: set[int] = set()
    signature = dialect_of(conn).json_text("meta", "signature")
    for chunk, marks in in_chunks(list(ids)):
        if "episodic" not in kinds:
            sql = f"SELECT node FROM memory_episodes WHERE node IN ({marks})"
            found.update(row[0] for row in conn.execute(sql, chunk))
        if "procedural" not in kinds:
            sql = f"SELECT id FROM memory_nodes WHERE id IN ({marks}) AND kind = 'procedural'"
            sql += f" AND {signature} IS NOT NULL"
            found.update(row[0] for row in conn.execute(sql, chunk))
    return found


def run_rows(conn: Any) -> str:
    """An SQL query of the full-text index's rows that hold run records: each one's own row, or its pieces' rows
    (keyed by minus the piece's id, memory/graph/pieces.py)."""
    signature = dialect_of(conn).json_text("meta", "signature")
    records = (
        "SELECT node AS id FROM memory_episodes UNION ALL SELECT id FROM memory_nodes"
        f" WHERE kind = 'procedural' AND {signature} IS NOT NULL AND deleted IS NULL"
    )
    return f"SELECT id FROM ({records}) AS r UNION ALL SELECT -p.id FROM memory_pieces p WHERE p.node IN ({records})"
