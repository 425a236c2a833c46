"""Consolidation: decay what is not used, prune what decayed, judge procedures.

A pass is planned on a snapshot (`plan`) and then applied in one
transaction (`apply_plan`), each change an event with the pass as its cause;
`--dry-run` only plans. Three kinds of change:

- decay: a `related` edge loses a factor `decay` of its weight for each
  whole `decay_period_s` since it was last used or last decayed (whichever
  is later); the edge's `consolidated` time moves on by those whole periods;
- prune: a `related` edge whose weight is under `prune_below` and that was
  not used within `horizon_s` is dropped softly. `ground` and `distill`
  edges are provenance and are never decayed or pruned;
- procedures: each procedure's success rate has the posterior
  Beta(prior_alpha + successes, prior_beta + failures). A probationary
  procedure whose posterior mean minus `z` standard deviations reaches
  `promote_at`, after at least `min_cycles` refinement cycles, becomes
  active; one whose mean plus `z` deviations is under `retire_at` is retired;
  an active one whose lower bound falls under `retire_at` goes back to
  probationary.

Idempotence follows from the rules: decay applies whole periods and records
them, pruned edges are gone, and a status is a function of the counts, which
consolidation does not change. A second pass right after the first finds
nothing to do.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from dataclasses import dataclass, field

from memory.evolution_params import EvolutionParams
from memory.graph_ops import log_event

__all__ = ["ConsolidationPlan", "apply_plan", "plan", "posterior", "procedure_status"]


@dataclass
class ConsolidationPlan:
    decays: list[tuple[int, float, float, float]] = field(default_factory=list)  # (edge, before, after, consolidated)
    prunes: list[tuple[int, float]] = field(default_factory=list)  # (edge, weight)
    statuses: list[tuple[int, str, str, float]] = field(default_factory=list)  # (node, before, after, mean)

    @property
    def changes(self) -> int:
        return len(self.decays) + len(self.prunes) + len(self.statuses)

    def summary(self) -> dict:
        moves: dict[str, int] = {}
        for _, before, after, _ in self.statuses:
            key = f"{before}->{after}"
            moves[key] = moves.get(key, 0) + 1
        return {"decayed": len(self.decays), "pruned": len(self.prunes), "procedures": moves, "changes": self.changes}


def posterior(successes: float, failures: float, params: EvolutionParams) -> tuple[float, float]:
    """The mean and standard deviation of Beta(prior_alpha + successes, prior_beta + failures)."""
    a, b = params.prior_alpha + successes, params.prior_beta + failures
    mean = a / (a + b)
    return mean, math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))


def procedure_status(status: str | None, successes: int, failures: int, cycles: int, params: EvolutionParams) -> str:
    """Where a procedure belongs now, given its counts (a pure function: consolidation stays idempotent)."""
    mean, sd = posterior(successes, failures, params)
    lower, upper = mean - params.z * sd, mean + params.z * sd
    status = status or "probationary"
    if status == "retired":
        return status
    if upper < params.retire_at:
        return "retired"
    if status == "probationary" and lower >= params.promote_at and cycles >= params.min_cycles:
        return "active"
    if status == "active" and lower < params.retire_at:
        return "probationary"
    return status


def plan(conn: sqlite3.Connection, params: EvolutionParams, now: float | None = None) -> ConsolidationPlan:
    now = time.time() if now is None else now
    found = ConsolidationPlan()
    rows = conn.execute(
        "SELECT id, weight, max(coalesce(last_used, created), coalesce(consolidated, 0)) AS anchor,"
        " coalesce(last_used, created) FROM memory_edges"
        " WHERE deleted IS NULL AND kind = 'related' AND (weight < ? OR anchor <= ?)",
        [params.prune_below, now - params.decay_period_s],
    ).fetchall()
    for edge_id, weight, anchor, used in rows:
        periods = math.floor((now - anchor) / params.decay_period_s)
        after = weight
        if periods >= 1:
            after = round(weight * params.decay**periods, 6)
            found.decays.append((edge_id, weight, after, anchor + periods * params.decay_period_s))
        if after < params.prune_below and used < now - params.horizon_s:
            found.prunes.append((edge_id, after))
    procedures = conn.execute(
        "SELECT id, status, successes, failures, coalesce(json_extract(meta, '$.cycles'), 0) FROM memory_nodes"
        " WHERE kind = 'procedural' AND deleted IS NULL"
    ).fetchall()
    for node_id, status, successes, failures, cycles in procedures:
        after = procedure_status(status, successes, failures, cycles, params)
        if after != (status or "probationary"):
            found.statuses.append((node_id, status or "probationary", after, posterior(successes, failures, params)[0]))
    return found


def apply_plan(conn: sqlite3.Connection, found: ConsolidationPlan, cause: str) -> dict:
    now = time.time()
    conn.executemany(
        "UPDATE memory_edges SET weight = ?, consolidated = ?, updated = ? WHERE id = ?",
        [(after, anchor, now, edge_id) for edge_id, _, after, anchor in found.decays],
    )
    conn.executemany(
        "INSERT INTO memory_events (at, op, edge, before, after, cause) VALUES (?, 'decay', ?, ?, ?, ?)",
        [(now, e, json.dumps({"weight": b}), json.dumps({"weight": a}), cause) for e, b, a, _ in found.decays],
    )
    conn.executemany("UPDATE memory_edges SET deleted = ? WHERE id = ?", [(now, e) for e, _ in found.prunes])
    conn.executemany(
        "INSERT INTO memory_events (at, op, edge, before, cause) VALUES (?, 'unlink', ?, ?, ?)",
        [(now, e, json.dumps({"weight": w, "why": "pruned"}), cause) for e, w in found.prunes],
    )
    for node_id, before, after, mean in found.statuses:
        conn.execute("UPDATE memory_nodes SET status = ?, updated = ? WHERE id = ?", [after, now, node_id])
        log_event(
            conn,
            "status",
            node=node_id,
            before={"status": before},
            after={"status": after, "posterior_mean": round(mean, 4)},
            cause=cause,
        )
    return found.summary()
