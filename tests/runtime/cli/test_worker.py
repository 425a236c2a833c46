"""`loci worker` as real processes over one home: each job done exactly once.

The workers run `loci worker` with one more job kind, `touch`, whose effect
is a row of `touched` written with the job's completion; a `touch` job asked
to block does so on its first attempt until a line arrives on the worker's
stdin (or the worker is killed). Each worker prints `done ID` after a job,
so the tests wait on their output, never on the clock.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import psycopg
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from loci.memory.engines.select import use_engine
from loci.memory.errors import UsageError
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph
from loci.memory.jobs.queue import Jobs
from loci.runtime.cli.main import main
from loci.runtime.cli.worker import runnable

WORKER = """
import os, socket, sys, anyio
if os.environ.get("WORKER_HOST"):  # a worker that looks to the others as if it ran on another machine
    socket.gethostname = lambda: os.environ["WORKER_HOST"]
import loci.memory.evolution.evolution as evolution_module

real = evolution_module.Evolution.handlers

def handlers(self):
    async def touch(job):
        if job.payload.get("block") and job.attempts == 1:
            print(f"inside {job.id}", flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)
        sql = "INSERT INTO touched (job, owner) VALUES (?, ?)"
        await self.jobs.complete(job, lambda conn: conn.execute(sql, [job.id, job.owner]).rowcount)
        print(f"done {job.id}", flush=True)
    return {**real(self), "touch": touch}

evolution_module.Evolution.handlers = handlers
from loci.runtime.cli.main import main
sys.exit(main(sys.argv[1:]))
"""

ROOT = str(Path(__file__).resolve().parents[3])


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}


@asynccontextmanager
async def worker(*args: str, host: str = "") -> AsyncIterator[tuple[Process, BufferedByteReceiveStream, list[str]]]:
    """A `loci worker` process with the `touch` kind, once it takes signals; killed after the block if it still
    runs; with its stdout and its stderr's lines up to the one that says it is ready."""
    env = {**child_env(), "WORKER_HOST": host}
    process = await anyio.open_process([sys.executable, "-c", WORKER, "worker", *args], env=env)
    assert process.stdout is not None and process.stderr is not None
    try:
        err = BufferedByteReceiveStream(process.stderr)
        lines: list[str] = []
        with anyio.fail_after(60):
            while not lines or not lines[-1].startswith("loci worker: running"):
                lines.append(await line(err))
        yield process, BufferedByteReceiveStream(process.stdout), lines
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.fail_after(30):
            await process.wait()
        await process.aclose()


async def line(out: BufferedByteReceiveStream) -> str:
    return (await out.receive_until(b"\n", 4096)).decode()


async def queue_touches(db: str, count: int, **payload: object) -> list[int]:
    async with use_engine(db) as store:
        jobs = Jobs(store)
        return [await jobs.enqueue("touch", dict(payload)) for _ in range(count)]


async def stop(process: Process) -> int:
    process.send_signal(signal.SIGTERM)
    with anyio.fail_after(30):
        return await process.wait()


def touched_pg(url: str) -> list[tuple[int, str]]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT job, owner FROM touched ORDER BY job").fetchall()


async def test_two_workers_on_postgresql_do_each_job_once(postgres_url: str) -> None:
    async with use_engine(postgres_url):  # migrates the new database before the workers start together
        pass
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE touched (job BIGINT NOT NULL, owner TEXT NOT NULL)")
    count = 40
    async with (
        worker("--db", postgres_url, "--poll", "60") as (a, a_out, a_said),
        worker("--db", postgres_url, "--poll", "60") as (b, b_out, b_said),
    ):
        ids = await queue_touches(postgres_url, count)  # a 60 s poll: the NOTIFY is what wakes them
        done: list[int] = []
        finished = anyio.Event()

        async def collect(out: BufferedByteReceiveStream) -> None:
            while True:
                word, _, job = (await line(out)).partition(" ")
                assert word == "done"
                done.append(int(job))
                if len(done) == count:
                    finished.set()

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                group.start_soon(collect, a_out)
                group.start_soon(collect, b_out)
                await finished.wait()
                group.cancel_scope.cancel()
        assert await stop(a) == 0 and await stop(b) == 0
        logs = [a_said, b_said]
    rows = touched_pg(postgres_url)
    assert sorted(job for job, _ in rows) == sorted(ids)  # every job once: no job missing, none twice
    assert sorted(done) == sorted(ids)
    for log in logs:  # every kind runs there: nothing is said to stay queued
        assert len(log) == 1
        assert log[0].startswith("loci worker: running refine, touch jobs of project default in postgresql://")


async def test_a_job_of_a_killed_worker_is_done_once_by_the_other(postgres_url: str) -> None:
    async with use_engine(postgres_url):
        pass
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE touched (job BIGINT NOT NULL, owner TEXT NOT NULL)")
    async with worker("--db", postgres_url, "--poll", "60") as (a, a_out, _):
        [job] = await queue_touches(postgres_url, 1, block=True)
        with anyio.fail_after(60):
            assert await line(a_out) == f"inside {job}"
        async with worker("--db", postgres_url, "--poll", "0.2") as (b, b_out, _):
            a.kill()  # SIGKILL in the middle of the job: it stays `running` under a dead owner
            with anyio.fail_after(60):
                assert await a.wait() == -signal.SIGKILL
                assert await line(b_out) == f"done {job}"
            assert await stop(b) == 0
    [(done_job, owner)] = touched_pg(postgres_url)
    assert done_job == job and f":{b.pid}:" in owner
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT status, attempts FROM jobs WHERE id = %s", [job]).fetchone() == ("done", 2)


async def test_a_job_of_a_killed_worker_on_another_machine_is_claimed_again_after_its_lease(
    postgres_url: str,
) -> None:
    async with use_engine(postgres_url):
        pass
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE touched (job BIGINT NOT NULL, owner TEXT NOT NULL)")
    async with worker("--db", postgres_url, "--lease", "1", host="elsewhere") as (a, a_out, _):
        [job] = await queue_touches(postgres_url, 1, block=True)
        with anyio.fail_after(60):
            assert await line(a_out) == f"inside {job}"
        a.kill()
        with anyio.fail_after(60):
            await a.wait()
        with psycopg.connect(postgres_url) as conn:  # its process cannot be checked from here: only the lease ends it
            owner = conn.execute("SELECT owner FROM jobs WHERE id = %s", [job]).fetchone()[0]
        assert owner.startswith(f"elsewhere:{a.pid}:")
        async with worker("--db", postgres_url, "--poll", "0.2") as (b, b_out, _):
            with anyio.fail_after(60):
                assert await line(b_out) == f"done {job}"
            assert await stop(b) == 0
    [(done_job, owner)] = touched_pg(postgres_url)
    assert done_job == job and f":{b.pid}:" in owner


async def test_sigterm_lets_the_job_in_hand_finish(tmp_path: Path) -> None:
    db = str(tmp_path / "loci.db")
    async with use_engine(db) as store:
        await store.write(lambda conn: conn.execute("CREATE TABLE touched (job INTEGER, owner TEXT)"))
    [job] = await queue_touches(db, 1, block=True)
    async with worker("--db", db, "--poll", "0.2") as (a, a_out, _):
        with anyio.fail_after(60):
            assert await line(a_out) == f"inside {job}"
        a.send_signal(signal.SIGTERM)
        assert a.stdin is not None and a.stderr is not None
        with anyio.fail_after(60):  # the signal is taken before the job is let go on
            stopping = await line(BufferedByteReceiveStream(a.stderr))
        assert stopping == "loci: loci.jobs: stopping after the job in hand (again to stop at once)"
        await a.stdin.send(b"go on\n")
        with anyio.fail_after(60):
            assert await line(a_out) == f"done {job}"
            assert await a.wait() == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT job FROM touched").fetchall() == [(job,)]


async def test_once_on_sqlite_runs_the_queue_and_exits(tmp_path: Path) -> None:
    db = str(tmp_path / "loci.db")
    async with use_engine(db) as store:
        await store.write(lambda conn: conn.execute("CREATE TABLE touched (job INTEGER, owner TEXT)"))
    ids = await queue_touches(db, 5)
    async with worker("--db", db, "--once") as (a, a_out, _):
        with anyio.fail_after(60):
            lines = [await line(a_out) for _ in range(6)]
            assert await a.wait() == 0
    assert lines[:5] == [f"done {job}" for job in ids]
    assert lines[5].startswith("ran 5 jobs")
    with sqlite3.connect(db) as conn:
        assert [row[0] for row in conn.execute("SELECT job FROM touched ORDER BY job")] == ids


async def test_on_postgresql_a_worker_runs_the_refinement_an_episode_queued(postgres_url: str) -> None:
    async with use_engine(postgres_url) as store:
        evolution = Evolution(Graph(store))
        fact, _ = await evolution.graph.remember("the harbor fee is 35 euros")
        step = Step("memory_get", {"id": fact.ref}, used=(fact.id,))
        await evolution.episodes.write(Episode("what is the harbor fee", [step], outcome=1.0))
    result = await anyio.run_process(
        [sys.executable, "-m", "loci.runtime.cli.main", "worker", "--db", postgres_url, "--once"],
        env=child_env(),
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().startswith("ran 1 jobs (0 to retry, 0 failed, 0 lost")
    async with use_engine(postgres_url) as store:
        assert (await Graph(store).get(fact.id)).successes == 1


def test_kinds_narrow_the_handlers_and_an_unknown_kind_is_refused() -> None:
    handlers = {"refine": object(), "note": object()}
    assert runnable(handlers, None) == handlers
    assert runnable(handlers, ["note"]) == {"note": handlers["note"]}
    with pytest.raises(UsageError, match="--kinds: no handler for nope"):
        runnable(handlers, ["nope"])


@pytest.mark.parametrize(
    ("argv", "said", "opened"),
    [
        # the kinds are known once the home is open (its handlers): the home is made, no job is claimed
        (["--kinds", "nope"], "loci: --kinds: no handler for nope; this worker runs refine", True),
        (["--poll", "0"], "loci: --poll must be at least 0.01, not 0", False),
        (["--project", "a", "--all-projects"], "loci: give --project or --all-projects, not both", False),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str, opened: bool
) -> None:
    db = tmp_path / "loci.db"
    assert main(["worker", "--db", str(db), "--once", *argv]) == 2
    assert capsys.readouterr().err.splitlines() == [said]
    assert db.exists() is opened
