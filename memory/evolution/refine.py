"""Refinement: one episode's outcome, turned into changes of the graph.

`refine_episode` is the effect of one `refine` job; the worker runs it inside
the transaction that also marks the job done (memory/jobs/queue.py), so it happens
exactly once or not at all. Every change is an event whose cause names the
job and the episode.

With the outcome known (the job queued by feedback, or by an episode written
with its outcome), it first counts the outcome once:
- each memory the episode used gains a success or a failure; each procedure
  it used also survives one more refinement cycle;
- each link between facts it used gains a co-success (moving its weight
  toward 1) or a co-failure (toward 0);
- a failure sets the episode's `ground` links to `failed_ground` (0 by
  default). They still record what the episode used, but recall stops
  spreading from the failed attempt to those facts: an episode is the best
  match of a task like its own, and one full-weight link from it fills a
  fact's graph part, so a wrong look-alike it used would keep outranking the
  fact that answers;
- a success may distil its step sequence (memory/evolution/distill.py).

Then structural passes run until they settle (the stopping rule: a pass that
changes less than `stop_fraction` of what it looked at is the last):
- repair: facts used together in a success, not linked, get a link;
- interference: a link between used facts whose co-activation keeps ending
  in failure, once under `drop_below`, is dropped softly;
- granularity: near-duplicates of the used facts are merged into them, an
  overloaded used fact is split (memory/evolution/granularity.py).
An episode without an outcome yet gets only the granularity passes.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from itertools import combinations

from loci.memory.engines.dialects import dialect_of
from loci.memory.evolution.distill import distill
from loci.memory.evolution.granularity import look_alikes, merge_nodes, split_node
from loci.memory.evolution.params import EvolutionParams
from loci.memory.evolution.revise import COUNTED, undo_counting
from loci.memory.graph.ops import fetch_nodes, log_event, unlink_edge, upsert_edge
from loci.memory.graph.records import EDGE_COLUMNS, Edge, edge_from_row, node_ref

__all__ = ["Refinement", "refine_episode"]


@dataclass
class Refinement:
    """What one refinement did: counts by kind of change, and the passes it took."""

    episode: int
    changes: dict[str, int] = field(default_factory=dict)
    passes: int = 0
    procedure: int | None = None

    def add(self, name: str, count: int = 1) -> None:
        if count:
            self.changes[name] = self.changes.get(name, 0) + count

    def as_dict(self) -> dict:
        return {
            "episode": node_ref(self.episode),
            "changes": self.changes,
            "passes": self.passes,
            "procedure": None if self.procedure is None else node_ref(self.procedure),
        }


def refine_episode(
    conn: sqlite3.Connection, episode: int, params: EvolutionParams, *, count_outcome: bool, cause: str
) -> Refinement:
    done = Refinement(episode)
    row = conn.execute(
        "SELECT e.signature, e.outcome, n.meta FROM memory_episodes e JOIN memory_nodes n ON n.id = e.node"
        " WHERE e.node = ? AND n.deleted IS NULL",
        [episode],
    ).fetchone()
    if row is None:
        return done
    signature, outcome, meta = row
    steps = json.loads(meta).get("steps", [])
    used = _live_used(conn, steps)
    success = None if outcome is None else outcome >= params.success_at
    if count_outcome and success is not None:
        undone = undo_counting(conn, episode, cause)  # a revised verdict: the earlier one's effects go first
        done.add("undone", undone)
        log_event(conn, COUNTED, node=episode, after={"outcome": outcome}, cause=cause)
        _count_outcome(conn, used, steps, success, params, cause, done)
        if success:
            found = distill(conn, episode, signature, params, cause)
            done.add("procedures", found.get("procedures", 0))
            done.add("distill_edges", found.get("distill_edges", 0))
            done.procedure = found.get("procedure")
        else:
            _discount_grounds(conn, episode, params, cause, done)
    facts = [i for i, kind in used.items() if kind == "semantic"]
    if not count_outcome:
        success = None  # repair and interference belong to the job that counts the outcome
    fresh = set(facts)  # the facts whose look-alikes are still to be compared
    for _ in range(params.max_passes):
        looked, changed, facts, fresh = _structural_pass(conn, facts, fresh, success, params, cause, done)
        done.passes += 1
        if changed < params.stop_fraction * max(1, looked):
            break
    return done


def _live_used(conn: sqlite3.Connection, steps: list[dict]) -> dict[int, str]:
    ids = list(dict.fromkeys(i for step in steps for i in step.get("used", [])))
    nodes = fetch_nodes(conn, ids)
    return {i: nodes[i].kind for i in ids if i in nodes}


def _edges_between(conn: sqlite3.Connection, facts: list[int]) -> list[Edge]:
    if len(facts) < 2:
        return []
    marks = ",".join("?" * len(facts))
    sql = (
        f"SELECT {EDGE_COLUMNS} FROM memory_edges WHERE deleted IS NULL AND kind = 'related' AND label = ''"
        f" AND src IN ({marks}) AND dst IN ({marks})"
    )
    return [edge_from_row(r) for r in conn.execute(sql, facts + facts)]


def _count_outcome(
    conn: sqlite3.Connection,
    used: dict[int, str],
    steps: list[dict],
    success: bool,
    params: EvolutionParams,
    cause: str,
    done: Refinement,
) -> None:
    column = "successes" if success else "failures"
    conn.executemany(f"UPDATE memory_nodes SET {column} = {column} + 1 WHERE id = ?", [(i,) for i in used])
    done.add(column, len(used))
    dialect = dialect_of(conn)
    for node_id, kind in used.items():
        if kind == "procedural":
            cycles = f"coalesce({dialect.json_int('meta', 'cycles')}, 0) + 1"
            conn.execute(
                f"UPDATE memory_nodes SET meta = {dialect.json_with('meta', 'cycles', cycles)} WHERE id = ?", [node_id]
            )
        log_event(conn, "outcome", node=node_id, after={column: 1}, cause=cause)
    facts = [i for i, kind in used.items() if kind == "semantic"]
    for edge in _edges_between(conn, facts):
        weight = edge.weight + params.reinforce * (1 - edge.weight) if success else edge.weight * (1 - params.weaken)
        counter = "co_success" if success else "co_failure"
        conn.execute(
            f"UPDATE memory_edges SET {counter} = {counter} + 1, weight = ?, updated = ? WHERE id = ?",
            [round(weight, 6), time.time(), edge.id],
        )
        log_event(
            conn,
            "reweight",
            edge=edge.id,
            before={"weight": edge.weight},
            after={"weight": round(weight, 6), counter: 1},
            cause=cause,
        )
        done.add("reinforced" if success else "weakened")


def _discount_grounds(
    conn: sqlite3.Connection, episode: int, params: EvolutionParams, cause: str, done: Refinement
) -> None:
    """A failed episode's links to the facts it used take the weight `failed_ground`."""
    rows = conn.execute(
        "SELECT id, weight FROM memory_edges WHERE deleted IS NULL AND kind = 'ground' AND src = ? AND weight != ?",
        [episode, params.failed_ground],
    ).fetchall()
    weight, now = params.failed_ground, time.time()
    for edge_id, before in rows:
        conn.execute("UPDATE memory_edges SET weight = ?, updated = ? WHERE id = ?", [weight, now, edge_id])
        log_event(conn, "reweight", edge=edge_id, before={"weight": before}, after={"weight": weight}, cause=cause)
    done.add("discounted", len(rows))


def _structural_pass(
    conn: sqlite3.Connection,
    facts: list[int],
    fresh: set[int],
    success: bool | None,
    params: EvolutionParams,
    cause: str,
    done: Refinement,
) -> tuple[int, int, list[int], set[int]]:
    """One pass of repair, interference, merge and split over the used facts; (looked, changed, facts, fresh).

    Look-alikes are compared for the `fresh` facts only: those not compared yet, or changed by the
    pass before (a merge into them, a split out of them)."""
    looked = changed = 0
    edges = _edges_between(conn, facts)
    linked = {frozenset((e.src, e.dst)) for e in edges}
    if success:
        for a, b in combinations(sorted(facts), 2):
            looked += 1
            if frozenset((a, b)) not in linked:
                upsert_edge(conn, a, b, "related", weight=params.repair_weight, cause=f"{cause} (repair)")
                done.add("repaired")
                changed += 1
    for edge in edges:
        looked += 1
        failing = edge.co_failure >= params.drop_failures and edge.co_failure > edge.co_success
        if failing and edge.weight < params.drop_below:
            unlink_edge(conn, edge.id, cause=f"{cause} (interference)")
            done.add("dropped")
            changed += 1
    survivors: list[int] = []
    changed_facts: set[int] = set()
    for fact in facts:
        if not conn.execute("SELECT 1 FROM memory_nodes WHERE id = ? AND deleted IS NULL", [fact]).fetchone():
            continue
        compared, twins = look_alikes(conn, fact, params) if fact in fresh else (0, [])
        looked += compared
        for twin in twins:
            keep, drop = min(fact, twin), max(fact, twin)
            merge_nodes(conn, keep, drop, f"{cause} (merge)")
            done.add("merged")
            changed += 1
            fact = keep
            changed_facts.add(keep)
        text_len = conn.execute("SELECT length(text) FROM memory_nodes WHERE id = ?", [fact]).fetchone()[0]
        if text_len > params.split_chars:
            parts = split_node(conn, fact, params, f"{cause} (split)")
            if parts:
                done.add("split")
                changed += 1
                survivors.extend(parts)
                changed_facts.update(parts)
                continue
        survivors.append(fact)
    return looked, changed, list(dict.fromkeys(survivors)), changed_facts
