"""Noise: what an episode was shown and did not use, counted against it.

A recall shows more than a run uses. When the outcome is known, each fact a
step was shown but no step used is noise for that task: with
`noise_failures` it gains a failure, which recall's prior part reads
(memory/graph/recall.py: a fact that keeps being shown and never helps sinks
a little, one that answered rises), and with `noise_weaken` above 0 each
`related` link between a used fact and a noise fact moves that share of the
way to 0, with a co-failure counted, since that link spread activation to a
fact that did not help. Both are events with the refinement's cause, so a
revised verdict undoes them (memory/evolution/revise.py).
"""

from __future__ import annotations

import sqlite3
import time
from typing import Protocol

from memory.evolution.params import EvolutionParams
from memory.graph.ops import fetch_nodes, log_event

__all__ = ["count_noise", "noise_of"]


class _Counts(Protocol):
    def add(self, name: str, count: int = 1) -> None: ...


def noise_of(conn: sqlite3.Connection, steps: list[dict], used: dict[int, str]) -> list[int]:
    """The live facts a step was shown that no step used, in order."""
    shown = list(dict.fromkeys(i for step in steps for i in step.get("recalled", []) if i not in used))
    nodes = fetch_nodes(conn, shown)
    return [i for i in shown if i in nodes and nodes[i].kind == "semantic"]


def count_noise(
    conn: sqlite3.Connection,
    steps: list[dict],
    used: dict[int, str],
    params: EvolutionParams,
    cause: str,
    done: _Counts,
) -> None:
    if not params.noise_failures and params.noise_weaken <= 0:
        return
    noise = noise_of(conn, steps, used)
    if not noise:
        return
    if params.noise_failures:
        conn.executemany("UPDATE memory_nodes SET failures = failures + 1 WHERE id = ?", [(i,) for i in noise])
        for node_id in noise:
            log_event(conn, "outcome", node=node_id, after={"failures": 1}, cause=cause)
        done.add("noise", len(noise))
    facts = [i for i, kind in used.items() if kind == "semantic"]
    if params.noise_weaken <= 0 or not facts:
        return
    a, b = ",".join("?" * len(facts)), ",".join("?" * len(noise))
    rows = conn.execute(
        "SELECT id, weight FROM memory_edges WHERE deleted IS NULL AND kind = 'related' AND label = ''"
        f" AND ((src IN ({a}) AND dst IN ({b})) OR (src IN ({b}) AND dst IN ({a})))",
        [*facts, *noise, *noise, *facts],
    ).fetchall()
    now = time.time()
    for edge_id, before in rows:
        weight = round(before * (1 - params.noise_weaken), 6)
        conn.execute(
            "UPDATE memory_edges SET co_failure = co_failure + 1, weight = ?, updated = ? WHERE id = ?",
            [weight, now, edge_id],
        )
        log_event(
            conn,
            "reweight",
            edge=edge_id,
            before={"weight": before},
            after={"weight": weight, "co_failure": 1},
            cause=cause,
        )
    done.add("weakened_noise", len(rows))
