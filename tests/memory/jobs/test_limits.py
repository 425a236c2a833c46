"""The queue's attempt limit reaches every kind of job the memory queues: refine and describe."""

from __future__ import annotations

from loci.memory.engines.sqlite.store import Store
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.evolution.params import EvolutionParams
from loci.memory.graph.graph import Graph
from loci.memory.jobs.limits import JobLimits
from loci.memory.jobs.queue import Jobs
from loci.memory.jobs.worker import Worker


async def test_refine_and_describe_jobs_get_the_queues_attempt_limit(store: Store) -> None:
    async def broken(prompt: str) -> str:
        raise RuntimeError("the model is gone")

    jobs = Jobs(store, JobLimits(max_attempts=1))
    evolution = Evolution(Graph(store), EvolutionParams(distill_n=2), language=broken, jobs=jobs)
    fact, _ = await evolution.graph.remember("deploy uses make release")
    for task in ("deploy the web app", "deploy the api app"):
        steps = [Step("memory_recall", {"query": "deploy"}, used=(fact.id,)), Step("read", {"id": "x"})]
        await evolution.episodes.write(Episode(task, steps, outcome=1.0))
    ran = await Worker(jobs, evolution.handlers()).drain()
    rows = await store.read(lambda db: list(db.query("SELECT kind, status, attempts, max_attempts FROM jobs")))
    assert {row["kind"] for row in rows} == {"refine", "describe"}
    assert all(row["max_attempts"] == 1 for row in rows)
    [describe] = [row for row in rows if row["kind"] == "describe"]
    assert describe["status"] == "failed" and describe["attempts"] == 1  # one try, no retry
    assert ran["failed"] == 1 and ran["retry"] == 0


async def test_a_job_queued_inside_a_transaction_gets_the_limit_too(store: Store) -> None:
    jobs = Jobs(store, JobLimits(max_attempts=5))
    job_id = await store.write(lambda db: jobs.add(db.conn, "refine", {"episode": 1}, "refine:1:formed"))
    assert job_id is not None and (await jobs.get(job_id))["max_attempts"] == 5
    assert await store.write(lambda db: jobs.add(db.conn, "refine", {"episode": 1}, "refine:1:formed")) is None
