"""Every parameter of the memory's evolution, with its default, in one place.

Formation, refinement, consolidation and memory-in-the-loop read their
numbers from one `EvolutionParams`; the job queue that runs refinement has
its own limits (`memory.jobs.limits.JobLimits`). The defaults are the ones `loci bench evolution` is measured with; the
figures that chose them are in docs/benchmarks.md, "Figures behind the code's choices".

Formation
    `form_weight`: the weight of a new `related` edge between facts used in
    one step; each further step that uses both adds `form_step` (capped at 1).
    `ground_weight`: the weight of the `ground` link from an episode to each
    fact it used. Recall spreads from an episode that matches a question to
    these facts; at 1 a training question's look-alike pulls its evidence
    into answers it does not belong to. An episode that matches a
    question nearly as well as its best match lifts the facts it used by
    its whole match instead (memory/graph/experience.py).

Refinement (one job per episode)
    `success_at`: an outcome at or above it is a success, below it a failure.
    `repair_weight`: the weight of a link repair adds between facts used
    together in a success but not linked.
    `reinforce`: a co-success moves an edge's weight this share of the way to 1.
    `weaken`: a co-failure moves it this share of the way to 0.
    `failed_ground`: the weight a failed episode's `ground` links (episode
    to each fact it used) are set to; formation gives them `ground_weight`. Recall lets
    an episode that matches a task strongly lift the facts at the other end of its
    links above 0 (memory/graph/experience.py), so any weight above 0 lets a failed
    attempt keep lifting the fact it used.
    `drop_below`, `drop_failures`: a `related` edge whose weight falls under
    `drop_below` after at least `drop_failures` co-failures, more than its
    co-successes, is dropped softly (interference).
    `merge_similarity`: two live facts whose word sets have at least this
    Jaccard similarity are merged into the older one (near-duplicates).
    `merge_candidates`: how many lexical look-alikes of each used fact are
    compared.
    `split_chars`: a fact longer than this is split at sentence or
    paragraph bounds (overload).
    `distill_n` (N), `distill_theta` (θ): a step sequence that recurs in at
    least N successful episodes with a success rate of at least θ becomes a
    probationary procedure.
    `distill_min_steps`: a step sequence shorter than this is never distilled
    (a lone recall is what every run does; it is no recipe, and a procedure
    over every question spread to all their episodes, which cost recall).
    `stop_fraction`: a refinement pass that changes less than this share of
    what it looked at is the last one (FluxMem's PEMS uses 0.01);
    `max_passes` only guards against a rule that never settles.

Consolidation
    `decay`: the factor an unused `related` edge's weight is multiplied by per
    `decay_period_s` without use.
    `prune_below`, `horizon_s`: an edge under `prune_below` not used within
    `horizon_s` is dropped softly.
    `prior_alpha`, `prior_beta`: the Beta prior of a procedure's success
    rate; its posterior adds successes and failures.
    `promote_at`: a probationary procedure whose posterior mean minus `z`
    standard deviations reaches this, after `min_cycles` refinement cycles,
    becomes active.
    `retire_at`: a procedure whose posterior mean plus `z` standard
    deviations falls below this is retired.

Memory in the loop
    `loop_procedures`, `loop_facts`: how many procedures and facts a run is
    shown at its start; `loop_share`: the share of the task region they may
    take.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_PARAMS", "EvolutionParams"]

DAY = 86_400.0


@dataclass(frozen=True)
class EvolutionParams:
    form_weight: float = 0.3
    form_step: float = 0.1
    ground_weight: float = 0.25
    success_at: float = 0.5
    repair_weight: float = 0.5
    reinforce: float = 0.1
    weaken: float = 0.35
    failed_ground: float = 0.0
    drop_below: float = 0.15
    drop_failures: int = 2
    merge_similarity: float = 0.9
    merge_candidates: int = 5
    split_chars: int = 4_000
    distill_n: int = 3
    distill_theta: float = 0.5
    distill_min_steps: int = 2
    stop_fraction: float = 0.01
    max_passes: int = 8
    decay: float = 0.98
    decay_period_s: float = DAY
    prune_below: float = 0.05
    horizon_s: float = 30 * DAY
    prior_alpha: float = 1.0
    prior_beta: float = 1.0
    z: float = 1.0
    promote_at: float = 0.55
    retire_at: float = 0.3
    min_cycles: int = 2
    loop_procedures: int = 2
    loop_facts: int = 3
    loop_share: float = 0.4


DEFAULT_PARAMS = EvolutionParams()
