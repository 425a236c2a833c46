"""`loci bench evolution`: does the memory learn?

Two arms run the same stream of `--episodes` tasks from one synthetic world
(bench/evolution/world.py), each on its own fresh home with the same facts:

- static: formation only. Every episode is written with its outcome (ground
  edges, links between facts used together, use counts), and the same
  recall and the same policy act on the graph; no refinement or
  consolidation ever runs.
- evolving: the same, plus the refinement job of every episode (run by a
  `Worker` right after the episode, as a background worker that keeps up
  would) and a consolidation pass every `--consolidate-every` episodes.

The static arm gets every advantage except evolution: the same facts, the
same recall, the same policy, the same episodes with their outcomes and the
same formation edges. What it lacks is what the world rewards: knowing which
of two look-alike links held in past successes (repair and interference
reweight links, so spreading activation lifts the fact that answered before
over its look-alikes), one copy of a twice-stored distractor instead of two
(merging), and the recipe of a task type (distillation), which saves the
failed tries of exploring the tools and so also the runs that exhausted
their step budget.

Reported at episodes 50, 100, 200 and 500, over the episodes since the
previous checkpoint: the success rate and steps per success of each arm.
`success_gain_at_200` is evolving minus static over episodes 101-200;
`steps_reduction` is 1 - evolving/static steps per success over the last
window. Then the scale measures (bench/evolution/scale.py): refinement time
per episode and a consolidation pass on a 100,000-node graph.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from loci.bench.evolution.locomo import run_locomo
from loci.bench.evolution.scale import measure_scale
from loci.bench.evolution.world import TOOLS, Task, World
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError
from loci.memory.evolution.episodes import Episode
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.graph.recall import Recall
from loci.memory.jobs.worker import Worker
from loci.runtime.cli.doctor import cpu_name

__all__ = ["add_arguments", "run"]

CHECKPOINTS = (50, 100, 200, 500)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--k", type=int, default=8, help="facts the policy recalls per task")
    parser.add_argument("--max-steps", type=int, default=20, help="steps a task may take")
    parser.add_argument("--noise", type=float, default=0.1, help="chance an outcome is reported flipped")
    parser.add_argument("--consolidate-every", type=int, default=50)
    parser.add_argument("--scale-nodes", type=int, default=100_000, help="graph size for the timing measures (0: skip)")
    parser.add_argument("--scale-jobs", type=int, default=60, help="refinement jobs timed on the large graph")
    parser.add_argument(
        "--db", default=None, help="time the large graph here: a file, or an empty postgresql://... database"
    )
    parser.add_argument(
        "--data", type=Path, default=None, help="LoCoMo JSON or BEAM chats: measure learning on their conversations"
    )
    parser.add_argument("--shown", type=int, default=10, help="with --data: turns a training recall shows")
    parser.add_argument(
        "--diagnose",
        action="store_true",
        help="with --data: also report how much feedback could add at @10 and why it does not (`bound`)",
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.data is not None and args.db is not None:
        raise UsageError("--db is where the synthetic graph is timed; with --data the homes are temporary files")
    if args.data is not None:
        return await run_locomo(args)
    world = World(args.seed)
    tasks = world.tasks(args.episodes, args.seed + 1)
    with tempfile.TemporaryDirectory(prefix="loci-evolution-") as tmp:
        static = await _arm(world, tasks, Path(tmp) / "static.db", args, evolve=False)
        evolving = await _arm(world, tasks, Path(tmp) / "evolving.db", args, evolve=True)
        scale = await measure_scale(args.db or Path(tmp) / "scale.db", args.scale_nodes, args.scale_jobs, args.seed)
    return _report(static, evolving, scale, args)


async def _arm(world: World, tasks: list[Task], path: Path, args: argparse.Namespace, *, evolve: bool) -> dict:
    rng = random.Random(args.seed + 2)  # the same noise in both arms
    async with await Store.open(path) as store:
        graph = Graph(store)
        await graph.add_many([NewNode(text) for text in world.facts()], cause="bench world")
        evolution = Evolution(graph)
        worker = Worker(evolution.jobs, evolution.handlers())
        recall = Recall(graph)
        solved, steps, refine_ms, facts_right, walked = [], [], [], [], []
        for i, task in enumerate(tasks, 1):
            order = random.Random(args.seed * 100_003 + i).sample(list(TOOLS), len(TOOLS))
            attempt = await _act(world, task, evolution, recall, args, rng, order)
            await evolution.episodes.write(Episode(task.text, attempt.steps, outcome=attempt.outcome))
            solved.append(attempt.solved)
            facts_right.append(attempt.facts_right)
            walked.append(attempt.stages_done)
            steps.append(len(attempt.steps))
            if evolve:
                started = time.perf_counter()
                await worker.drain()
                refine_ms.append((time.perf_counter() - started) * 1000)
                if i % args.consolidate_every == 0:
                    await evolution.consolidate()
        procedures = await store.read(
            lambda db: dict(
                db.conn.execute(
                    "SELECT coalesce(status, 'none'), count(*) FROM memory_nodes"
                    " WHERE kind = 'procedural' AND deleted IS NULL GROUP BY status"
                ).fetchall()
            )
        )
    return {
        "solved": solved,
        "steps": steps,
        "refine_ms": refine_ms,
        "procedures": procedures,
        "facts_right": facts_right,
        "walked": walked,
    }


async def _act(
    world: World, task: Task, evolution: Evolution, recall: Recall, args: argparse.Namespace, rng, order: list[str]
):
    procedures = await evolution.procedures(task.text, 1, record=False)
    plan, used = [], []
    if procedures:
        plan = [shape.split("(")[0] for shape in procedures[0]["steps"] if not shape.startswith("memory_")]
        used.append(int(procedures[0]["id"][4:]))
    found = await recall.recall(task.text, k=args.k, kinds=["semantic"])
    # A fact's measured success: the mean of Beta(1 + successes, 1 + failures). Refinement counts these;
    # in the static arm they stay 0, so the mean is 0.5 for every fact and the recall order decides.
    ranked = [(r.node.id, r.node.text, r.score + _measured(r.node)) for r in found]
    return world.attempt(
        task, plan, ranked, extra=tuple(used), max_steps=args.max_steps, noise=args.noise, rng=rng, order=order
    )


def _measured(node: Any) -> float:
    return (1 + node.successes) / (2 + node.successes + node.failures)


def _rates(arm: dict) -> dict[str, dict[str, float]]:
    out, previous = {}, 0
    for point in CHECKPOINTS:
        if point > len(arm["solved"]):
            break
        solved = arm["solved"][previous:point]
        steps = [s for s, ok in zip(arm["steps"][previous:point], solved, strict=True) if ok]
        out[str(point)] = {
            "success_rate": round(sum(solved) / len(solved), 4),
            "facts_right": round(sum(arm["facts_right"][previous:point]) / len(solved), 4),
            "steps_done": round(sum(arm["walked"][previous:point]) / len(solved), 4),
            "steps_per_success": round(sum(steps) / len(steps), 3) if steps else None,
        }
        previous = point
    return out


def _report(static: dict, evolving: dict, scale: dict, args: argparse.Namespace) -> dict[str, Any]:
    s_rates, e_rates = _rates(static), _rates(evolving)
    last = str(max(int(p) for p in s_rates))
    at_200 = "200" if "200" in s_rates else last
    s_steps, e_steps = s_rates[last]["steps_per_success"], e_rates[last]["steps_per_success"]
    return {
        "episodes": args.episodes,
        "seed": args.seed,
        "static": s_rates,
        "evolving": e_rates,
        "success_gain_at_200": round(e_rates[at_200]["success_rate"] - s_rates[at_200]["success_rate"], 4),
        "steps_reduction": round(1 - e_steps / s_steps, 4) if s_steps and e_steps else None,
        "procedures_by_status": evolving["procedures"],
        "refine_world_p50_ms": round(statistics.median(evolving["refine_ms"]), 3),
        **scale,
        "goals": {
            "success_gain_at_200": 0.15,
            "steps_reduction": 0.30,
            "refine_p50_ms": 20.0,
            "consolidate_s_100k": 10.0,
            "second_consolidation_changes": 0,
        },
        "cpu": cpu_name(),
    }
