"""The job queue and the worker: claims, retries with a limit, reclaiming a dead worker's job."""

from __future__ import annotations

import logging

import anyio
import pytest

from loci.memory.engines.base import Engine
from loci.memory.jobs.limits import JobLimits
from loci.memory.jobs.queue import Job, JobLost, Jobs
from loci.memory.jobs.worker import Foreground, Worker


async def test_a_job_is_claimed_once_and_its_effect_commits_with_its_completion(engine_store: Engine) -> None:
    jobs = Jobs(engine_store)
    assert await jobs.enqueue("note", {"n": 1}, key="note:1") is not None
    assert await jobs.enqueue("note", {"n": 1}, key="note:1") is None  # the same work is queued once
    job = await jobs.claim()
    assert job is not None and job.attempts == 1
    assert await Jobs(engine_store).claim() is None  # another worker finds nothing to take
    await jobs.complete(job, lambda conn: conn.execute("CREATE TABLE effect (x TEXT)") and {"ok": True})
    row = await jobs.get(job.id)
    assert row["status"] == "done" and row["result"] == '{"ok": true}'


async def test_a_failing_job_is_retried_then_marked_failed_with_its_error(
    engine_store: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    jobs = Jobs(engine_store, JobLimits(max_attempts=2))
    job_id = await jobs.enqueue("boom", {})
    calls = []

    async def boom(job: Job) -> None:
        calls.append(job.attempts)
        raise ValueError(f"broken on attempt {job.attempts}")

    with caplog.at_level(logging.WARNING, logger="loci.jobs"):
        ran = await Worker(jobs, {"boom": boom}).drain()
    assert calls == [1, 2]
    assert [r.getMessage() for r in caplog.records] == [
        f"job {job_id} (boom) failed on attempt 1: ValueError: broken on attempt 1; queued again",
        f"job {job_id} (boom) failed on attempt 2: ValueError: broken on attempt 2; no attempt left",
    ]
    assert ran == {"done": 0, "retry": 1, "failed": 1, "lost": 0, "deferred": 0}
    row = await jobs.get(job_id)
    assert row["status"] == "failed" and row["error"] == "ValueError: broken on attempt 2"


async def test_a_job_left_running_by_a_dead_process_is_queued_again(engine_store: Engine) -> None:
    dead = Jobs(engine_store)
    dead.owner = f"{dead.owner.split(':')[0]}:999999999:dead"  # a pid no process has
    job_id = await dead.enqueue("work", {})
    claimed = await dead.claim()
    assert claimed is not None
    alive = Jobs(engine_store)
    assert await alive.claim() is None
    assert await alive.reclaim() == 1
    again = await alive.claim()
    assert again is not None and again.id == job_id and again.attempts == 2
    try:
        await dead.complete(claimed, lambda conn: None)
    except JobLost:
        pass
    else:
        raise AssertionError("the dead worker's late completion must not be written")
    assert (await alive.get(job_id))["error"].startswith("the worker")


async def test_background_model_calls_wait_for_the_foreground_turn() -> None:
    foreground = Foreground()
    order: list[str] = []
    release = anyio.Event()

    async def turn() -> None:
        async with foreground.turn():
            await release.wait()
            order.append("turn")

    async def background() -> None:
        await foreground.wait_idle()
        order.append("background")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(turn)
            await anyio.wait_all_tasks_blocked()
            group.start_soon(background)
            await anyio.wait_all_tasks_blocked()
            assert order == [] and foreground.busy
            release.set()
    assert order == ["turn", "background"]


async def test_workers_draining_one_queue_at_once_run_each_job_once(engine_store: Engine) -> None:
    """Four workers (four owners) claim and complete together: on PostgreSQL each on its own connection."""
    queued = Jobs(engine_store)
    await engine_store.write(lambda conn: conn.execute("CREATE TABLE effects (job INTEGER NOT NULL)"))
    ids = [await queued.enqueue("note", {"n": n}) for n in range(40)]

    async def drain(jobs: Jobs) -> None:
        while (job := await jobs.claim()) is not None:
            await jobs.complete(job, lambda conn, j=job: conn.execute("INSERT INTO effects VALUES (?)", [j.id]) and {})

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(drain, Jobs(engine_store))
    done = await engine_store.read(lambda conn: sorted(r[0] for r in conn.execute("SELECT job FROM effects")))
    assert done == sorted(ids)
    assert (await queued.counts())["done"] == 40
