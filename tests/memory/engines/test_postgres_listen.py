"""Waiting on PostgreSQL for queued jobs: a job's NOTIFY reaches a listener when, and only if, its
transaction commits, and one sent while no one waited is not lost."""

from __future__ import annotations

import anyio
import pytest

from loci.memory.engines.postgres.listen import PgListener
from loci.memory.engines.postgres.store import PgStore
from loci.memory.jobs.queue import JOBS_CHANNEL, Job, Jobs
from loci.memory.jobs.worker import Worker


class Rollback(Exception):
    """Raised inside a write so its transaction rolls back."""


class Watched:
    """A listener that says when the worker first waits on it (the queue looked at, found empty)."""

    def __init__(self, listener: PgListener) -> None:
        self.listener = listener
        self.waiting = anyio.Event()

    async def wait(self, timeout: float) -> bool:
        self.waiting.set()
        return await self.listener.wait(timeout)


async def test_a_queued_job_wakes_a_listener_only_once_its_transaction_commits(postgres_url: str) -> None:
    async with await PgStore.open(postgres_url) as store:
        jobs = Jobs(store)
        listener = await PgListener.open(postgres_url, JOBS_CHANNEL)
        try:

            def queue_then_roll_back(conn: object) -> None:
                jobs.add(conn, "touch", {})  # type: ignore[arg-type]
                raise Rollback

            with pytest.raises(Rollback):
                await store.write(queue_then_roll_back)
            assert await listener.wait(0.2) is False  # rolled back: nothing to announce
            await jobs.enqueue("touch", {})  # committed while no one waits: kept for the next wait
            with anyio.fail_after(30):
                assert await listener.wait(30) is True
        finally:
            await listener.aclose()


async def test_a_worker_with_a_listener_runs_a_job_queued_by_another_process_without_polling(
    postgres_url: str,
) -> None:
    async with await PgStore.open(postgres_url) as store, await PgStore.open(postgres_url) as elsewhere:
        listener = await PgListener.open(postgres_url, JOBS_CHANNEL)
        jobs = Jobs(store)
        ran = anyio.Event()
        worker: Worker

        async def touch(job: Job) -> None:
            await jobs.complete(job, lambda conn: None)
            worker.stop()
            ran.set()

        watched = Watched(listener)
        worker = Worker(jobs, {"touch": touch}, poll_s=3600, listener=watched)
        try:
            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    await group.start(worker.serve)
                    # Not `wait_all_tasks_blocked`: psycopg's wait wakes now and then, and may never be seen blocked.
                    await watched.waiting.wait()
                    await Jobs(elsewhere).enqueue("touch", {})  # another store: no in-process wake
                    await ran.wait()
            assert worker.ran["done"] == 1  # serve returned by itself after stop(): no cancellation
            assert (await jobs.counts())["done"] == 1
        finally:
            await listener.aclose()


def test_a_channel_name_is_checked_before_it_reaches_sql() -> None:
    with pytest.raises(ValueError, match="not a channel name"):
        anyio.run(PgListener.open, "postgresql://nobody@127.0.0.1:1/none", "jobs; DROP TABLE jobs")


async def test_a_worker_whose_listen_connection_is_dropped_listens_again_and_runs_the_next_job(
    postgres_url: str,
) -> None:
    async with await PgStore.open(postgres_url) as store, await PgStore.open(postgres_url) as elsewhere:
        listener = await PgListener.open(postgres_url, JOBS_CHANNEL)
        jobs = Jobs(store)
        ran = anyio.Event()
        worker: Worker

        async def touch(job: Job) -> None:
            await jobs.complete(job, lambda conn: None)
            worker.stop()
            ran.set()

        def listening(conn: object) -> int:
            sql = "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database()"
            return int(conn.execute(sql).fetchone()[0])  # type: ignore[attr-defined]

        def drop_the_listener(conn: object) -> int:
            sql = (
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE query LIKE 'LISTEN%' AND datname = current_database()"
            )
            return int(conn.execute(sql).fetchone()[0])  # type: ignore[attr-defined]

        worker = Worker(jobs, {"touch": touch}, poll_s=3600, listener=listener)  # no poll: only a NOTIFY wakes it
        try:
            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    await group.start(worker.serve)
                    assert await elsewhere.write(drop_the_listener) == 1
                    while await elsewhere.read(listening) == 0:  # it listens again, on a new connection
                        await anyio.sleep(0.05)
                    await Jobs(elsewhere).enqueue("touch", {})
                    await ran.wait()
            assert worker.ran["done"] == 1
        finally:
            await listener.aclose()
