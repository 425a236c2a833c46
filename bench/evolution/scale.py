"""The timing half of `loci bench evolution`: refinement and consolidation at 100,000 nodes.

Builds a graph of `nodes` note-like facts (bench.recall.memory.make_sentences) with
about three `related` edges each, then writes `jobs` episodes that use a few
facts each (half of them linked, so repair and reweighting have work),
with outcomes, and times each refinement job from claim to commit, with no
language model. Then it ages the edges (last use spread over the past 200
days, as a long-lived home would have) and times a consolidation pass over
the whole graph, and counts what a second pass right after it changes (0
when consolidation is idempotent).

`--db` names the home the timings run in: a file, or an empty PostgreSQL
database (`postgresql://…`), so both engines are timed by the same code.
Times are wall-clock; the `_cpu_` keys are the process's CPU time over the
same spans, which a machine shared with other work inflates less.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Any

from loci.bench.recall.memory import make_sentences
from loci.memory.engines.base import Engine
from loci.memory.engines.select import use_engine
from loci.memory.errors import UsageError
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.jobs.worker import Worker

__all__ = ["measure_scale"]

BATCH = 5_000
DAY = 86_400.0


async def measure_scale(home: str | Path, nodes: int, jobs: int, seed: int) -> dict[str, Any]:
    """The timings in `home`: a file, or an empty postgresql://... database (`--db`)."""
    if nodes <= 0:
        return {}
    rng = random.Random(seed)
    async with use_engine(home) as store:
        held = await store.read(lambda db: db.conn.execute("SELECT count(*) FROM memory_nodes").fetchone()[0])
        if held:
            raise UsageError(f"bench evolution times its graph in an empty home; {store.location} holds {held} nodes")
        graph = Graph(store)
        ids = await _build(graph, nodes, rng, seed)
        evolution = Evolution(graph)
        worker = Worker(evolution.jobs, evolution.handlers())
        refine_ms, refine_cpu_ms = [], []
        for i in range(jobs):
            used = rng.sample(ids, 4)
            steps = [
                Step("memory_recall", {"query": "q"}, used=tuple(used[:2])),
                Step("read", {"id": "x"}, used=tuple(used[2:])),
            ]
            await evolution.episodes.write(Episode(f"scale task {i}", steps, outcome=float(rng.random() < 0.6)))
            started, cpu = time.perf_counter(), time.process_time()
            await worker.drain()
            refine_ms.append((time.perf_counter() - started) * 1000)
            refine_cpu_ms.append((time.process_time() - cpu) * 1000)
        await _age(store, rng)
        started, cpu = time.perf_counter(), time.process_time()
        first = await evolution.consolidate()
        consolidate_s, consolidate_cpu_s = time.perf_counter() - started, time.process_time() - cpu
        second = await evolution.consolidate()
        stats = await graph.stats()
    return {
        "scale_nodes": stats["nodes"],
        "scale_edges": stats["edges"],
        "refine_p50_ms": round(statistics.median(refine_ms), 3),
        "refine_p95_ms": round(sorted(refine_ms)[int(0.95 * len(refine_ms))], 3),
        "refine_p50_cpu_ms": round(statistics.median(refine_cpu_ms), 3),
        "scale_engine": store.engine,
        "consolidate_s_100k": round(consolidate_s, 3),
        "consolidate_cpu_s_100k": round(consolidate_cpu_s, 3),
        "first_consolidation": first,
        "second_consolidation_changes": second["changes"],
    }


async def _build(graph: Graph, nodes: int, rng: random.Random, seed: int) -> list[int]:
    ids: list[int] = []
    texts = make_sentences(nodes, seed)
    for start in range(0, nodes, BATCH):
        made = await graph.add_many([NewNode(t) for t in texts[start : start + BATCH]], cause="bench scale")
        ids.extend(i for i, _ in made)
    links, seen = [], set()
    while len(links) < 3 * nodes:
        a = rng.randrange(len(ids))
        b = (a + rng.choice((1, 2, 3))) % len(ids) if rng.random() < 0.5 else rng.randrange(len(ids))
        if a != b and (a, b) not in seen:
            seen.add((a, b))
            links.append((ids[a], ids[b], "related", round(rng.uniform(0.05, 1.0), 3)))
    for start in range(0, len(links), 4 * BATCH):
        await graph.link_many(links[start : start + 4 * BATCH], cause="bench scale")
    return ids


async def _age(store: Engine, rng: random.Random) -> None:
    """Spread the edges' creation and last use over the past 200 days."""
    now = time.time()

    def write(db: Any) -> None:
        rows = db.conn.execute("SELECT id FROM memory_edges WHERE deleted IS NULL").fetchall()
        ages = [(now - rng.uniform(0, 200) * DAY, edge_id) for (edge_id,) in rows]
        db.conn.executemany("UPDATE memory_edges SET created = ?, last_used = NULL WHERE id = ?", ages)

    await store.write(write)
