"""Consolidation: decay what is not used, prune what decayed, judge procedures.

A pass is planned on a snapshot (`plan`) and then applied in one
transaction (`apply_plan`), each change an event with the pass as its cause;
`--dry-run` only plans. Three kinds of change:

- decay: a `related` edge loses a factor `decay` of its weight for each
  period (`decay_period_s`, a day by default, counted from the Unix epoch)
  that ended since it was last used or last decayed, whichever is later;
  its `consolidated` time becomes the start of the current period;
- prune: a `related` edge whose weight is under `prune_below` and that was
  not used within `horizon_s` (in whole periods) is dropped softly. `ground` and `distill`
  edges are provenance and are never decayed or pruned;
- procedures: each procedure's success rate has the posterior
  Beta(prior_alpha + successes, prior_beta + failures). A probationary
  procedure whose posterior mean minus `z` standard deviations reaches
  `promote_at`, after at least `min_cycles` refinement cycles, becomes
  active; one whose mean plus `z` deviations is under `retire_at` is retired;
  an active one whose lower bound falls under `retire_at` goes back to
  probationary.

Idempotence follows from the rules: decay applies whole periods and records
the period it reached, pruned edges are gone, and a status is a function of
the counts, which consolidation does not change. A second pass in the same
period as the first finds nothing to do. The edge work is a few set-based
statements, so a pass over a large graph costs what the database does, not
a Python loop. They run on either engine: the fragments that differ (a
scalar maximum, rounding, a period's integer part, a JSON object) come from
the dialect (`_edge_sql`), and the named parameters are numbered
(`_numbered`), which both drivers take.
"""

from __future__ import annotations

import math
import re
import sqlite3
import time
from dataclasses import dataclass, field

from loci.memory.engines.base import Dialect
from loci.memory.engines.dialects import dialect_of
from loci.memory.evolution.params import EvolutionParams
from loci.memory.graph.ops import log_event

__all__ = ["ConsolidationPlan", "apply_plan", "plan", "posterior", "procedure_status"]


@dataclass
class ConsolidationPlan:
    """What a pass does (or would do): edge counts, and the procedures that move (node, before, after, mean)."""

    decayed: int = 0
    pruned: int = 0
    statuses: list[tuple[int, str, str, float]] = field(default_factory=list)

    @property
    def changes(self) -> int:
        return self.decayed + self.pruned + len(self.statuses)

    def summary(self) -> dict:
        moves: dict[str, int] = {}
        for _, before, after, _ in self.statuses:
            key = f"{before}->{after}"
            moves[key] = moves.get(key, 0) + 1
        return {"decayed": self.decayed, "pruned": self.pruned, "procedures": moves, "changes": self.changes}


# Time runs in whole periods (days, by default) counted from the Unix epoch, so a pass applies the decay of
# the periods that ended since an edge was last used or decayed, and two passes in one period agree.
def _edge_sql(d: Dialect) -> tuple[str, str, str]:
    """The SQL of an edge's decayed weight, and the conditions to decay and to prune it, in `d`'s SQL."""
    last = d.greatest(d.whole("coalesce(last_used, created) / :period"), d.whole("coalesce(consolidated, 0) / :period"))
    due = f"(:epoch - {last})"
    decayed = d.round(f"weight * pow(:decay, {d.greatest(due, '0')})", 6)
    unused = f"(:epoch - {d.whole('coalesce(last_used, created) / :period')})"
    live = "deleted IS NULL AND kind = 'related'"
    return decayed, f"{live} AND {due} >= 1", f"{live} AND {decayed} < :prune_below AND {unused} > :horizon"


def _numbered(sql: str, values: dict) -> tuple[str, list]:
    """`sql` with its named parameters (`:epoch`) numbered (`?2`), which both engines take, and their values."""
    names = list(dict.fromkeys(_NAMED.findall(sql)))
    numbered = _NAMED.sub(lambda m: f"?{names.index(m.group(1)) + 1}", sql)
    return numbered, [values[name] for name in names]


_NAMED = re.compile(r"(?<![:\w]):([a-z_]+)")


def _values(params: EvolutionParams, now: float) -> dict[str, float]:
    return {
        "period": params.decay_period_s,
        "epoch": math.floor(now / params.decay_period_s),
        "decay": params.decay,
        "prune_below": params.prune_below,
        "horizon": math.floor(params.horizon_s / params.decay_period_s),
        "now": now,
    }


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


def plan(
    conn: sqlite3.Connection, params: EvolutionParams, now: float | None = None, *, count_edges: bool = True
) -> ConsolidationPlan:
    """What a pass at `now` would change; `count_edges=False` leaves the edge counts to `apply_plan`."""
    values = _values(params, time.time() if now is None else now)
    found = ConsolidationPlan()
    d = dialect_of(conn)
    if count_edges:
        _, decay_where, prune_where = _edge_sql(d)
        found.decayed = conn.execute(
            *_numbered(f"SELECT count(*) FROM memory_edges WHERE {decay_where}", values)
        ).fetchone()[0]
        found.pruned = conn.execute(
            *_numbered(f"SELECT count(*) FROM memory_edges WHERE {prune_where}", values)
        ).fetchone()[0]
    procedures = conn.execute(
        f"SELECT id, status, successes, failures, coalesce({d.json_int('meta', 'cycles')}, 0) FROM memory_nodes"
        " WHERE kind = 'procedural' AND deleted IS NULL"
    ).fetchall()
    for node_id, status, successes, failures, cycles in procedures:
        after = procedure_status(status, successes, failures, cycles, params)
        if after != (status or "probationary"):
            found.statuses.append((node_id, status or "probationary", after, posterior(successes, failures, params)[0]))
    return found


def apply_plan(
    conn: sqlite3.Connection, found: ConsolidationPlan, params: EvolutionParams, cause: str, now: float | None = None
) -> dict:
    """Carry out a pass planned at `now` in the caller's transaction.

    One scan finds the edges to decay or prune and their new weights (a temporary table); the events
    and the two updates then read that table instead of scanning the edges again."""
    values = {**_values(params, time.time() if now is None else now), "cause": cause, "at": time.time()}
    d = dialect_of(conn)
    decayed_sql, decay_where, prune_where = _edge_sql(d)
    conn.execute("DROP TABLE IF EXISTS consolidation")  # the temporary table, the name's first meaning on both
    conn.execute(
        *_numbered(
            f"CREATE TEMP TABLE consolidation AS SELECT id, weight AS before, {decayed_sql} AS after,"
            f" ({decay_where}) AS decays, ({prune_where}) AS prunes FROM memory_edges"
            f" WHERE ({decay_where}) OR ({prune_where})",
            values,
        )
    )
    decayed, pruned = conn.execute(
        "SELECT sum(CAST(decays AS INTEGER)), sum(CAST(prunes AS INTEGER)) FROM consolidation"
    ).fetchone()
    found.decayed, found.pruned = decayed or 0, pruned or 0
    was, now_is = d.json_object({"weight": "before"}), d.json_object({"weight": "after"})
    pruned_as = d.json_object({"weight": "after", "why": "'pruned'"})
    conn.execute(
        *_numbered(
            f"INSERT INTO memory_events (at, op, edge, before, after, cause) SELECT :at, 'decay', id,"
            f" {was}, {now_is}, :cause FROM consolidation WHERE decays",
            values,
        )
    )
    conn.execute(
        *_numbered(
            "INSERT INTO memory_events (at, op, edge, before, cause) SELECT :at, 'unlink', id,"
            f" {pruned_as}, :cause FROM consolidation WHERE prunes",
            values,
        )
    )
    conn.execute(
        *_numbered(
            "UPDATE memory_edges SET weight = c.after, consolidated = :epoch * :period, updated = :at"
            " FROM consolidation AS c WHERE c.decays AND memory_edges.id = c.id",
            values,
        )
    )
    conn.execute(
        *_numbered(
            "UPDATE memory_edges SET deleted = :at FROM consolidation AS c WHERE c.prunes AND memory_edges.id = c.id",
            values,
        )
    )
    conn.execute("DROP TABLE consolidation")
    for node_id, before, after, mean in found.statuses:
        conn.execute("UPDATE memory_nodes SET status = ?, updated = ? WHERE id = ?", [after, values["at"], node_id])
        log_event(
            conn,
            "status",
            node=node_id,
            before={"status": before},
            after={"status": after, "posterior_mean": round(mean, 4)},
            cause=cause,
        )
    return found.summary()
