"""Whether a digest job still runs, told by the host and pid in its row, on each engine."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from loci.memory.engines.base import Engine
from loci.memory.errors import UsageError
from loci.memory.records.digest_jobs import DigestJobs
from loci.runtime.digest.run import resume


@pytest.fixture
def store(engine_store: Engine) -> Engine:
    """A home on each engine: these tests run on SQLite and on PostgreSQL."""
    return engine_store


def gone_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(child.stdout)


async def place(store: Engine, job_id: int, host: str, pid: int) -> None:
    """Make the job's row say it runs as `pid` on `host`, as a process of that machine would have written it."""
    sql = "UPDATE digest_jobs SET host = ?, pid = ? WHERE id = ?"
    await store.write(lambda db: db.execute(sql, [host, pid, job_id]))


async def test_a_new_job_records_this_host_and_process(store: Engine) -> None:
    jobs = DigestJobs(store)
    job = await jobs.get(await jobs.create("q", "stream", "scripted", {}, []))
    assert (job.host, job.pid, job.shown_status, job.runs_here) == (socket.gethostname(), os.getpid(), "running", True)


async def test_a_job_whose_process_is_gone_from_this_host_is_interrupted(store: Engine) -> None:
    jobs = DigestJobs(store)
    job_id = await jobs.create("q", "stream", "scripted", {}, [])
    await place(store, job_id, socket.gethostname(), gone_pid())
    assert (await jobs.get(job_id)).shown_status == "interrupted"


async def test_a_job_on_another_host_stays_running_and_is_not_resumed_here(store: Engine) -> None:
    """The same pid may be dead here and alive there: a row of another machine is not judged by this one's processes."""
    jobs = DigestJobs(store)
    job_id = await jobs.create("q", "stream", "scripted", {}, [])
    await place(store, job_id, "worker-7.example", gone_pid())
    job = await jobs.get(job_id)
    assert (job.shown_status, job.runs_here) == ("running", False)
    with pytest.raises(UsageError, match=r"still running \(process \d+ on worker-7.example\)"):
        await resume(job_id, model="scripted", db=store)
