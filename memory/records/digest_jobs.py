"""Checkpoints of long-document jobs (`loci digest`), in the `digest_jobs` table.

One row is one job: what was asked (paths with their SHA-256, the question,
the strategy and its settings), where it is (`state`: the reading position,
the bounded memory, the chunk ranges the memory rests on, the counts), and
how it ended (`status`, `result`, `error`). A streaming job rewrites its row
after every chunk, in one short transaction through the store's writer, so
a process killed at any point leaves the last finished chunk on disk and
nothing half-written: `--resume` starts from there.

The row keeps the host and pid of the process that runs the job; a
`running` row whose process is gone from this host was killed, and is
reported as `interrupted`. A job that runs on another host (a home on
PostgreSQL is shared by several machines) cannot be checked from here and
stays `running`.

A job belongs to the project `DigestJobs` was built for (`memory.projects`),
and is seen and resumed only through it: another project's job is "no
digest job", as one that never was. `project=ALL` lists every project's jobs
and changes none.

This table belongs to digest jobs alone; the background worker has its own.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any

import sqlite_utils
from sqlite_utils import Migrations

from loci.memory.engines.base import Engine
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.projects import ALL, DEFAULT_PROJECT, check_project, in_project, writable_project

__all__ = ["STATUSES", "DigestJob", "DigestJobs"]

MIGRATIONS = Migrations("digest")

STATUSES = ("running", "done", "failed", "interrupted")


@MIGRATIONS()
def create_digest_jobs(db: sqlite_utils.Database) -> None:
    db.execute(
        "CREATE TABLE digest_jobs ("
        " id INTEGER PRIMARY KEY, created REAL NOT NULL, updated REAL NOT NULL,"
        " status TEXT NOT NULL, pid INTEGER, question TEXT NOT NULL, strategy TEXT NOT NULL,"
        " model TEXT NOT NULL, settings TEXT NOT NULL DEFAULT '{}', files TEXT NOT NULL DEFAULT '[]',"
        " state TEXT NOT NULL DEFAULT '{}', result TEXT, error TEXT)"
    )


@MIGRATIONS()
def digest_jobs_by_project(db: sqlite_utils.Database) -> None:
    """Every job belongs to a project; the jobs of a home made before projects are `default`'s."""
    db.execute("ALTER TABLE digest_jobs ADD COLUMN project TEXT NOT NULL DEFAULT 'default'")
    db.execute("CREATE INDEX digest_jobs_project ON digest_jobs (project, id)")


@MIGRATIONS()
def digest_jobs_host(db: sqlite_utils.Database) -> None:
    """The host a job runs on, beside its pid: a pid says nothing about another machine's processes."""
    db.execute("ALTER TABLE digest_jobs ADD COLUMN host TEXT")


@dataclass
class DigestJob:
    """One job as stored. `files` holds `{path, sha256}` per input; `state` is the last checkpoint."""

    id: int
    status: str
    question: str
    strategy: str
    model: str
    settings: dict[str, Any]
    files: list[dict[str, Any]]
    state: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: str | None = None
    pid: int | None = None
    host: str | None = None
    created: float = 0.0
    updated: float = 0.0
    project: str = DEFAULT_PROJECT

    @property
    def shown_status(self) -> str:
        """`interrupted` for a `running` job whose process is gone from this host (killed, or the machine restarted)."""
        if self.status == "running" and not _alive(self.host, self.pid):
            return "interrupted"
        return self.status

    @property
    def runs_here(self) -> bool:
        """Whether this very process runs the job."""
        return self.pid == os.getpid() and self.host in (None, socket.gethostname())


class DigestJobs:
    """The digest jobs of one project of a home (`project=ALL`: of every project, for reading)."""

    def __init__(self, store: Engine, *, project: str | None = DEFAULT_PROJECT) -> None:
        self.store = store
        self.project = project if project is ALL else check_project(project)

    async def create(
        self, question: str, strategy: str, model: str, settings: dict[str, Any], files: list[dict[str, Any]]
    ) -> int:
        now = time.time()
        project = writable_project(self.project)
        row = [now, now, os.getpid(), socket.gethostname(), question, strategy, model]
        row += [json.dumps(settings), json.dumps(files), project]

        def insert(db: Any) -> int:
            return int(
                db.execute(
                    "INSERT INTO digest_jobs"
                    " (created, updated, status, pid, host, question, strategy, model, settings, files, project)"
                    " VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    row,
                ).fetchone()[0]
            )

        return await self.store.write(insert)

    async def get(self, job_id: int) -> DigestJob:
        where, args = in_project(self.project)

        def fetch(db: Any) -> DigestJob:
            rows = list(db.query(f"SELECT * FROM digest_jobs WHERE id = ?{where}", [job_id, *args]))
            if not rows:
                raise NotFoundError(f"no digest job {job_id}; `loci jobs` lists the jobs there are")
            return _job(rows[0])

        return await self.store.read(fetch)

    async def list(self, limit: int = 50) -> list[DigestJob]:
        """The most recent `limit` jobs, newest first (`limit` below 1 is refused, not an empty list)."""
        if limit < 1:
            raise UsageError(f"--limit must be at least 1, not {limit}")
        where, args = in_project(self.project)
        sql = f"SELECT * FROM digest_jobs WHERE TRUE{where} ORDER BY id DESC LIMIT ?"
        return await self.store.read(lambda db: [_job(row) for row in db.query(sql, [*args, limit])])

    async def checkpoint(self, job_id: int, state: dict[str, Any]) -> None:
        """Replace the job's state with `state` (one transaction: the old one or the new one, never half)."""
        await self._update(job_id, state=json.dumps(state))

    async def claim(self, job_id: int, strategy: str, state: dict[str, Any]) -> None:
        """Mark the job as running in this process (a resume too), with the strategy it runs and its state."""
        state_json = json.dumps(state)
        here = {"pid": os.getpid(), "host": socket.gethostname()}
        await self._update(job_id, status="running", **here, strategy=strategy, error=None, state=state_json)

    async def finish(self, job_id: int, result: dict[str, Any], state: dict[str, Any]) -> None:
        await self._update(job_id, status="done", result=json.dumps(result), state=json.dumps(state))

    async def stop(self, job_id: int, status: str, error: str) -> None:
        """End a job that did not finish: `failed` (an error) or `interrupted` (Ctrl-C, a cancelled call)."""
        await self._update(job_id, status=status, error=error)

    async def _update(self, job_id: int, **columns: Any) -> None:
        """Change the job's row; a job of another project, like one that does not exist, is not found."""
        names = ", ".join(f"{name} = ?" for name in columns)
        values = [*columns.values(), time.time(), job_id, writable_project(self.project)]
        sql = f"UPDATE digest_jobs SET {names}, updated = ? WHERE id = ? AND project = ?"
        if not await self.store.write(lambda db: db.execute(sql, values).rowcount):
            raise NotFoundError(f"no digest job {job_id}; `loci jobs` lists the jobs there are")


def _alive(host: str | None, pid: int | None) -> bool:
    """Whether the job's process may still run: False when it is gone from this host, True when it cannot be told."""
    if host is not None and host != socket.gethostname():
        return True
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def _job(row: dict[str, Any]) -> DigestJob:
    return DigestJob(
        id=row["id"],
        status=row["status"],
        question=row["question"],
        strategy=row["strategy"],
        model=row["model"],
        settings=json.loads(row["settings"] or "{}"),
        files=json.loads(row["files"] or "[]"),
        state=json.loads(row["state"] or "{}"),
        result=json.loads(row["result"]) if row["result"] else None,
        error=row["error"],
        pid=row["pid"],
        host=row["host"],
        created=row["created"],
        updated=row["updated"],
        project=row["project"],
    )
