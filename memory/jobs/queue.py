"""The persisted job queue that background work runs from.

A job is a row of `jobs` (`memory.jobs.schema`). Every kind is queued
through `Jobs` (`add` inside the caller's transaction, `enqueue` in its own),
so each row gets the queue's attempt limit (`memory.jobs.limits`). A worker claims the
oldest queued job in one write transaction, so two workers (two processes
on one home) never claim the same job: SQLite's `BEGIN IMMEDIATE` lets one
writer in at a time, and on PostgreSQL the claim's `FOR UPDATE SKIP LOCKED`
(the dialect's) passes by the job another worker is claiming. Claiming counts an attempt
and writes the claimant's `owner` (host, pid, a random tag) and a lease.

A job's effect and the row's `done` are written in ONE transaction
(`Jobs.complete`), after checking that the job is still this worker's. So a
crash before the commit leaves no effect and a queued-again job, and a crash
after it leaves the job done: the effect happens exactly once. The check
locks the job's row (`FOR UPDATE` on PostgreSQL), and a reclaim changes a
job only while it is still `running` under the owner it found, so a job
reclaimed while its worker commits is either done or queued again, never
both. A job done
after a retry keeps the error of the attempt before.

A job queued on PostgreSQL is announced on `JOBS_CHANNEL` in the same
transaction (the dialect's `notify`), so waiting workers wake when it
commits (memory/engines/postgres/listen.py); on SQLite workers poll.

After a crash the job stays `running` under a dead owner. `Jobs.reclaim`
(which every worker runs when it starts and when the queue looks empty)
puts such jobs back in the queue: those whose owner's process is gone (same
host) or whose lease ran out. A job that used up its attempts is marked
`failed`, keeping the last error.

A queue is built for one project (`memory.projects`): it queues jobs into
that project, with keys unique there, and claims, counts and reclaims only
that project's jobs. A queue built with `ALL` serves the whole home (a
background worker): it claims the jobs of every project, each `Job` saying
its own, and queues none.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlite_utils

from loci.memory.engines.dialects import dialect_of
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import StoreError
from loci.memory.jobs.limits import DEFAULT_LIMITS, JobLimits
from loci.memory.jobs.schema import JOB_STATES
from loci.memory.projects import ALL, DEFAULT_PROJECT, check_project, in_project, writable_project

__all__ = ["JOBS_CHANNEL", "Job", "JobDeferred", "JobLost", "Jobs"]

# Where a queued job is announced, its kind the payload (PostgreSQL's NOTIFY; SQLite's workers poll).
JOBS_CHANNEL = "loci_jobs"

T = TypeVar("T")


class JobLost(StoreError):
    """The job is no longer this worker's (reclaimed after its lease ran out); its effect was not written."""


class JobDeferred(Exception):
    """A handler gave its job back unfinished (the foreground needed the model): queued again, no attempt spent."""


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    key: str
    payload: dict[str, Any]
    attempts: int
    owner: str
    project: str = DEFAULT_PROJECT


def _owner_tag() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _alive(owner: str) -> bool:
    """Whether the process that owns a job may still be running (True when it cannot be checked)."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return True
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Jobs:
    """The job queue of one project of a home (`project=ALL`: of the whole home), seen by one worker (`owner`)."""

    def __init__(
        self, store: Store, limits: JobLimits = DEFAULT_LIMITS, *, project: str | None = DEFAULT_PROJECT
    ) -> None:
        self.store = store
        self.limits = limits
        self.project = project if project is ALL else check_project(project)
        self.owner = _owner_tag()

    def add(self, conn: sqlite3.Connection, kind: str, payload: dict[str, Any], key: str | None = None) -> int | None:
        """Queue a job inside the caller's transaction; None when the project has a job with this key already."""
        project = writable_project(self.project)
        now = time.time()
        key = key or f"{kind}:{uuid.uuid4().hex}"
        added = conn.execute(
            "INSERT INTO jobs (project, kind, key, payload, max_attempts, created, updated)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
            [project, kind, key, json.dumps(payload), self.limits.max_attempts, now, now],
        ).fetchone()
        if added and (notify := dialect_of(conn).notify(JOBS_CHANNEL)):
            conn.execute(notify, [kind])
        return added[0] if added else None

    async def enqueue(self, kind: str, payload: dict[str, Any], key: str | None = None) -> int | None:
        """Queue a job in a transaction of its own; None when a job with this key exists already."""
        return await self.store.write(lambda db: self.add(db.conn, kind, payload, key))

    async def results(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """The results of the jobs among `keys` that are done, by key."""
        if not keys:
            return {}
        where, args = in_project(self.project)
        sql = f"SELECT key, result FROM jobs WHERE status = 'done'{where} AND key IN ({','.join('?' * len(keys))})"
        rows = await self.store.read(lambda db: db.conn.execute(sql, [*args, *keys]).fetchall())
        return {key: json.loads(result or "{}") for key, result in rows}

    async def claim(self, kinds: tuple[str, ...] | None = None, *, after: int = 0) -> Job | None:
        """Claim the oldest queued job (of `kinds`, if given, with an id above `after`), or None."""
        return await self.store.write(lambda db: self._claim(db.conn, kinds, after))

    async def last_id(self) -> int:
        """The highest job id so far: jobs queued later have higher ids."""
        where, args = in_project(self.project)
        sql = f"SELECT COALESCE(MAX(id), 0) FROM jobs WHERE 1 = 1{where}"
        return await self.store.read(lambda db: db.conn.execute(sql, args).fetchone()[0])

    def _claim(self, conn: sqlite3.Connection, kinds: tuple[str, ...] | None, after: int = 0) -> Job | None:
        where, args = in_project(self.project)
        sql = f"SELECT id FROM jobs WHERE status = 'queued'{where} AND id > ?"
        params: list[Any] = [*args, after]
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params += kinds
        row = conn.execute(sql + " ORDER BY id LIMIT 1" + dialect_of(conn).skip_locked(), params).fetchone()
        if row is None:
            return None
        now = time.time()
        conn.execute(
            "UPDATE jobs SET status = 'running', attempts = attempts + 1, owner = ?, lease_until = ?, updated = ?"
            " WHERE id = ?",
            [self.owner, now + self.limits.lease_s, now, row[0]],
        )
        job_id, kind, key, payload, attempts, project = conn.execute(
            "SELECT id, kind, key, payload, attempts, project FROM jobs WHERE id = ?", [row[0]]
        ).fetchone()
        return Job(job_id, kind, key, json.loads(payload), attempts, self.owner, project)

    async def complete(self, job: Job, effect: Callable[[sqlite3.Connection], T]) -> T:
        """Write `effect(conn)` and mark the job done, in one transaction; `JobLost` if it is not ours any more."""

        def write(db: sqlite_utils.Database) -> T:
            conn = db.conn
            row = conn.execute(
                "SELECT status, owner FROM jobs WHERE id = ?" + dialect_of(conn).for_update(), [job.id]
            ).fetchone()
            if row != ("running", job.owner):
                raise JobLost(f"job {job.id} is no longer this worker's; its effect was not written")
            result = effect(conn)
            now = time.time()
            conn.execute(
                "UPDATE jobs SET status = 'done', result = ?, updated = ?, finished = ? WHERE id = ?",
                [json.dumps(result, default=str), now, now, job.id],
            )
            return result

        return await self.store.write(write)

    async def fail(self, job: Job, error: str) -> str:
        """Record a failed attempt: queued again, or `failed` after the last attempt. Returns the new status."""

        def write(db: sqlite_utils.Database) -> str:
            sql = "SELECT attempts, max_attempts, owner FROM jobs WHERE id = ?" + dialect_of(db.conn).for_update()
            row = db.conn.execute(sql, [job.id]).fetchone()
            if row is None or row[2] != job.owner:
                return "lost"
            status = "failed" if row[0] >= row[1] else "queued"
            now = time.time()
            db.conn.execute(
                "UPDATE jobs SET status = ?, error = ?, owner = NULL, lease_until = NULL, updated = ?, finished = ?"
                " WHERE id = ?",
                [status, error[:4000], now, now if status == "failed" else None, job.id],
            )
            return status

        return await self.store.write(write)

    async def release(self, job: Job, reason: str) -> bool:
        """Give a claimed job back to the queue without spending its attempt; False if it is not ours any more."""

        def write(db: sqlite_utils.Database) -> bool:
            cursor = db.conn.execute(
                "UPDATE jobs SET status = 'queued', attempts = attempts - 1, owner = NULL, lease_until = NULL,"
                " error = ?, updated = ? WHERE id = ? AND status = 'running' AND owner = ?",
                [reason[:4000], time.time(), job.id, job.owner],
            )
            return cursor.rowcount == 1

        return await self.store.write(write)

    async def reclaim(self) -> int:
        """Queue again the running jobs whose worker died or whose lease ran out; returns how many."""
        return await self.store.write(lambda db: self._reclaim(db.conn))

    def _reclaim(self, conn: sqlite3.Connection) -> int:
        now = time.time()
        where, args = in_project(self.project)
        rows = conn.execute(
            f"SELECT id, owner, lease_until, attempts, max_attempts FROM jobs WHERE status = 'running'{where}", args
        ).fetchall()
        count = 0
        for job_id, owner, lease_until, attempts, max_attempts in rows:
            if owner == self.owner or (_alive(owner or "") and (lease_until or 0) > now):
                continue
            status = "failed" if attempts >= max_attempts else "queued"
            error = f"the worker {owner} stopped during attempt {attempts}"
            count += conn.execute(
                "UPDATE jobs SET status = ?, owner = NULL, lease_until = NULL, error = ?, updated = ?"
                " WHERE id = ? AND status = 'running' AND owner = ?",
                [status, error, now, job_id, owner],
            ).rowcount
        return count

    async def counts(self, kinds: tuple[str, ...] | None = None) -> dict[str, int]:
        """The project's jobs (of `kinds`, if given) by status."""
        where, args = in_project(self.project)
        if kinds:
            where += f" AND kind IN ({','.join('?' * len(kinds))})"
            args = [*args, *kinds]

        def read(db: sqlite_utils.Database) -> dict[str, int]:
            found = dict.fromkeys(JOB_STATES, 0)
            sql = f"SELECT status, count(*) FROM jobs WHERE 1 = 1{where} GROUP BY status"
            found.update(db.conn.execute(sql, args).fetchall())
            return found

        return await self.store.read(read)

    async def get(self, job_id: int) -> dict[str, Any]:
        where, args = in_project(self.project)
        sql = f"SELECT * FROM jobs WHERE id = ?{where}"
        rows = await self.store.read(lambda db: list(db.query(sql, [job_id, *args])))
        if not rows:
            raise StoreError(f"no job {job_id}")
        return rows[0]
