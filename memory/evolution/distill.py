"""Distillation: a step sequence that keeps succeeding becomes a procedure.

Episodes with the same signature (memory/evolution/episodes.py: the tools of the steps
that did not fail, with the shape of their arguments) ran the same recipe.
When at least N of them succeeded and their success rate is at least θ
(`EvolutionParams.distill_n`, `distill_theta`), the recipe becomes a
`procedural` node with status `probationary`, linked by `distill` edges to
the successful episodes it came from, so `loci memory history` can trace it
back. Later successes with the same signature add their `distill` edge to
the existing procedure instead of making another.

The procedure's text is written by a deterministic rule: the words most of
its tasks share (so recall finds it for such tasks), then its numbered
steps. A worker with a model may rewrite it later (a `describe` job).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter

from loci.memory.engines.dialects import dialect_of
from loci.memory.evolution.params import EvolutionParams
from loci.memory.graph.ops import NewNode, insert_nodes, live_node, log_event, upsert_edge
from loci.memory.graph.terms import query_terms

__all__ = ["MAX_SOURCES", "distill", "procedure_for", "procedure_text"]

MAX_SOURCES = 50
KEYWORDS = 12


def procedure_for(conn: sqlite3.Connection, signature: str, project: str) -> int | None:
    """The live procedure of `project` distilled from this signature, if any."""
    row = conn.execute(
        "SELECT id FROM memory_nodes WHERE kind = 'procedural' AND deleted IS NULL"
        f" AND {dialect_of(conn).json_text('meta', 'signature')} = ? AND project = ?",
        [signature, project],
    ).fetchone()
    return row[0] if row else None


def procedure_text(tasks: list[str], shapes: list[str]) -> str:
    """The deterministic text of a procedure: the words its tasks share, then its steps."""
    counts: Counter[str] = Counter()
    for task in tasks:
        counts.update(list(dict.fromkeys(query_terms(task))))
    common = [w for w, n in counts.most_common() if n * 2 >= len(tasks)][:KEYWORDS]
    topic = " ".join(common) if common else tasks[-1][:200]
    steps = " ".join(f"{i}. {shape}" for i, shape in enumerate(shapes, 1))
    return f"Procedure for tasks like: {topic}. Steps: {steps}"


def distill(conn: sqlite3.Connection, episode: int, signature: str, params: EvolutionParams, cause: str) -> dict:
    """Distil the episode's signature if it now qualifies, from the episodes of its project; what changed, as
    counts."""
    shapes_in = signature.partition("|")[2]
    if not shapes_in or shapes_in.count(" > ") + 1 < params.distill_min_steps:
        return {}
    project = live_node(conn, episode).project
    existing = procedure_for(conn, signature, project)
    if existing is not None:
        _, created = upsert_edge(conn, existing, episode, "distill", weight=1.0, cause=cause)
        return {"distill_edges": int(created)}
    rows = conn.execute(
        "SELECT e.node, e.outcome FROM memory_episodes e JOIN memory_nodes n ON n.id = e.node"
        " WHERE e.signature = ? AND e.outcome IS NOT NULL AND n.project = ? ORDER BY e.node DESC",
        [signature, project],
    ).fetchall()
    wins = [node for node, outcome in rows if outcome >= params.success_at]
    if len(wins) < params.distill_n or len(wins) < params.distill_theta * len(rows):
        return {}
    sources = wins[:MAX_SOURCES]
    metas = dict(
        conn.execute(
            f"SELECT id, meta FROM memory_nodes WHERE id IN ({','.join('?' * len(sources))})", sources
        ).fetchall()
    )
    first = json.loads(metas[sources[0]])
    shapes = [step["shape"] for step in first.get("steps", []) if step.get("ok", True)]
    tasks = [json.loads(metas[n]).get("task", "") for n in sources]
    meta = {"signature": signature, "steps": shapes, "source_rate": round(len(wins) / len(rows), 4), "cycles": 0}
    made = [NewNode(procedure_text(tasks, shapes), "procedural", meta)]
    [(node, created)] = insert_nodes(conn, made, cause, project=project)
    if not created:  # the same text from another signature: keep one procedure, link this recipe's sources
        for source in sources:
            upsert_edge(conn, node, source, "distill", weight=1.0, cause=cause)
        return {"distill_edges": len(sources)}
    conn.execute("UPDATE memory_nodes SET status = 'probationary', updated = ? WHERE id = ?", [time.time(), node])
    log_event(conn, "status", node=node, after={"status": "probationary", "episodes": len(sources)}, cause=cause)
    for source in sources:
        upsert_edge(conn, node, source, "distill", weight=1.0, cause=cause)
    return {"procedures": 1, "distill_edges": len(sources), "procedure": node}
