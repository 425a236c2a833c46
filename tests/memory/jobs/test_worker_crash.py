"""The worker under crashes and concurrency: separate processes on one real SQLite home.

- SIGKILL in the middle of a refinement job's transaction: after a restart
  the graph is consistent and the job's effect happens exactly once;
- two processes, each with a worker, drain one queue: no job runs twice and
  no lock error surfaces.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio

from loci.memory.engines.sqlite.store import Store
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.evolution.params import EvolutionParams
from loci.memory.graph.graph import Graph
from loci.memory.jobs.worker import Worker

# Runs the refinement, then stops dead inside the job's transaction until it is killed.
HANG_IN_JOB = """
import sys, time, anyio
import loci.memory.evolution.evolution as evo_module
from loci.memory.evolution.evolution import Evolution
from loci.memory.evolution.params import EvolutionParams
from loci.memory.graph.graph import Graph
from loci.memory.engines.sqlite.store import Store
from loci.memory.jobs.worker import Worker

real = evo_module.refine_episode

def hang(*args, **kwargs):
    done = real(*args, **kwargs)
    print("inside", flush=True)
    time.sleep(600)
    return done

evo_module.refine_episode = hang

async def main():
    async with await Store.open(sys.argv[1]) as store:
        evolution = Evolution(Graph(store), EvolutionParams(distill_n=2, distill_theta=0.5))
        await Worker(evolution.jobs, evolution.handlers()).drain()

anyio.run(main)
"""

DRAIN = """
import json, sys, anyio
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph
from loci.memory.engines.sqlite.store import Store
from loci.memory.jobs.worker import Worker

async def main():
    async with await Store.open(sys.argv[1]) as store:
        evolution = Evolution(Graph(store))
        print("ready", flush=True)
        sys.stdin.readline()  # both workers start together
        print(json.dumps(await Worker(evolution.jobs, evolution.handlers()).drain()), flush=True)

anyio.run(main)
"""


def child_env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[3])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}


def check_consistency(path: Path) -> None:
    """No live edge touches a missing or forgotten node; every node and live edge has its creating event."""
    conn = sqlite3.connect(path)
    dangling = conn.execute(
        "SELECT count(*) FROM memory_edges e WHERE e.deleted IS NULL AND ("
        " NOT EXISTS (SELECT 1 FROM memory_nodes n WHERE n.id = e.src AND n.deleted IS NULL) OR"
        " NOT EXISTS (SELECT 1 FROM memory_nodes n WHERE n.id = e.dst AND n.deleted IS NULL))"
    ).fetchone()[0]
    unlogged_nodes = conn.execute(
        "SELECT count(*) FROM memory_nodes n WHERE NOT EXISTS"
        " (SELECT 1 FROM memory_events v WHERE v.node = n.id AND v.op = 'add')"
    ).fetchone()[0]
    unlogged_edges = conn.execute(
        "SELECT count(*) FROM memory_edges e WHERE NOT EXISTS"
        " (SELECT 1 FROM memory_events v WHERE v.edge = e.id AND v.op = 'link')"
    ).fetchone()[0]
    forgotten_with_live_fts = conn.execute(
        "SELECT count(*) FROM memory_nodes n WHERE n.deleted IS NOT NULL AND n.id IN (SELECT rowid FROM memory_fts"
        " WHERE memory_fts MATCH 'deploy')"
    ).fetchone()[0]
    conn.close()
    assert (dangling, unlogged_nodes, unlogged_edges, forgotten_with_live_fts) == (0, 0, 0, 0)


async def test_a_refinement_killed_mid_transaction_happens_exactly_once_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    params = EvolutionParams(distill_n=2, distill_theta=0.5)
    async with await Store.open(path) as store:
        evolution = Evolution(Graph(store), params)
        a, _ = await evolution.graph.remember("deploy uses make release")
        b, _ = await evolution.graph.remember("release needs the staging key")
        steps = [Step("memory_recall", {"query": "deploy"}, used=(a.id,)), Step("read", {"id": "x"}, used=(b.id,))]
        first = await evolution.episodes.write(Episode("deploy the web app", steps, outcome=1.0))
        await Worker(evolution.jobs, evolution.handlers()).drain()
        await evolution.episodes.write(Episode("deploy the api app", steps, outcome=1.0))

    child = subprocess.Popen(
        [sys.executable, "-c", HANG_IN_JOB, str(path)], stdout=subprocess.PIPE, env=child_env(), text=True
    )
    try:
        with anyio.fail_after(60):
            line = await anyio.to_thread.run_sync(child.stdout.readline)
        assert line.strip() == "inside"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()

    check_consistency(path)
    async with await Store.open(path) as store:
        evolution = Evolution(Graph(store), params)
        assert (await evolution.procedures("deploy")) == []  # the killed job's writes never landed
        ran = await Worker(evolution.jobs, evolution.handlers()).drain()
        assert ran["done"] == 1
        [procedure] = await evolution.procedures("deploy")
        fact = await evolution.graph.get(a.id)
        jobs = await store.read(lambda db: list(db.query("SELECT status, attempts, error FROM jobs ORDER BY id")))
    assert fact.successes == 2  # one per episode: the killed attempt counted nothing
    assert [j["status"] for j in jobs] == ["done", "done"] and jobs[1]["attempts"] == 2
    assert "stopped during attempt 1" in jobs[1]["error"]  # the crashed attempt stays on record
    assert len(procedure["steps"]) == 2 and procedure["status"] == "probationary"
    history = await _history(path, procedure["id"])
    assert sorted(int(s["episode"][4:]) for s in history["sources"]) == [first, first + 1]
    check_consistency(path)


async def _history(path: Path, ref: str) -> dict:
    async with await Store.open(path) as store:
        return await Evolution(Graph(store)).history(ref)


async def test_two_processes_with_a_worker_each_run_every_job_once(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    async with await Store.open(path) as store:
        evolution = Evolution(Graph(store))
        facts = [(await evolution.graph.remember(f"fact number {i} about service {i % 5}"))[0].id for i in range(12)]
        for i in range(40):
            used = (facts[i % 12], facts[(i * 5 + 1) % 12])
            step = Step("memory_recall", {"query": f"q{i}"}, used=used)
            await evolution.episodes.write(Episode(f"task {i}", [step], outcome=float(i % 3 != 0)))
    children = [
        subprocess.Popen(
            [sys.executable, "-c", DRAIN, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(),
            text=True,
        )
        for _ in range(2)
    ]
    outputs = []
    with anyio.fail_after(120):
        for child in children:
            assert (await anyio.to_thread.run_sync(child.stdout.readline)).strip() == "ready"
        for child in children:
            child.stdin.write("go\n")
            child.stdin.flush()
        for child in children:
            out, err = await anyio.to_thread.run_sync(child.communicate)
            assert child.returncode == 0, err
            assert "locked" not in err
            outputs.append(json.loads(out))
    assert sum(o["done"] for o in outputs) == 40
    assert all(o["retry"] == o["failed"] == o["lost"] == 0 for o in outputs)
    conn = sqlite3.connect(path)
    attempts = conn.execute("SELECT status, attempts, count(*) FROM jobs GROUP BY status, attempts").fetchall()
    counted = conn.execute("SELECT sum(successes) + sum(failures) FROM memory_nodes WHERE kind = 'semantic'").fetchone()
    conn.close()
    assert attempts == [("done", 1, 40)]
    assert counted[0] == 80  # two facts per episode, each outcome counted once
    check_consistency(path)
