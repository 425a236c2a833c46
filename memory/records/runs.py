"""Run records: what each run was asked, how it ended, and what it did.

A run is one task given to the agent, from `loci run`, a chat line, the
`run_task` MCP tool or a long-document job. Its row is written when it
starts (status `running`) and again when it ends, whatever the ending:
`done`, `partial` (a budget ran out, or the answer is unsupported),
`cancelled` (the caller gave up) or `failed` (an error). So a run that was
killed mid-way is still found, as `running` with no end time.

A record holds the answer, the reason for a partial or failed end, the
cited evidence and one line per turn (tool, arguments, observation id), as
JSON: the run's trace, readable by later feedback and by MCP clients.

A run belongs to the project `Runs` was built for (`memory.projects`): it
lists and finds only that project's runs, so a run of another project is
"no run", as one that never was; `Runs(store, project=ALL)` reads them all
and starts none.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlite_utils
from sqlite_utils import Migrations

from loci.memory.engines.base import Engine
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.projects import ALL, DEFAULT_PROJECT, check_project, in_project, writable_project

__all__ = ["STATUSES", "RunRecord", "Runs", "parse_run_id"]

MIGRATIONS = Migrations("runs")
STATUSES = ("running", "done", "partial", "cancelled", "failed")


@MIGRATIONS()
def create_runs_table(db: sqlite_utils.Database) -> None:
    db.execute(
        "CREATE TABLE runs ("
        " id INTEGER PRIMARY KEY, task TEXT NOT NULL, model TEXT NOT NULL DEFAULT '',"
        " source TEXT NOT NULL DEFAULT 'run', status TEXT NOT NULL DEFAULT 'running',"
        " answer TEXT NOT NULL DEFAULT '', reason TEXT,"
        " evidence TEXT NOT NULL DEFAULT '[]', turns TEXT NOT NULL DEFAULT '[]',"
        " tokens INTEGER NOT NULL DEFAULT 0, started REAL NOT NULL, finished REAL)"
    )


@MIGRATIONS()
def runs_by_project(db: sqlite_utils.Database) -> None:
    """Every run belongs to a project; the runs of a home made before projects are `default`'s."""
    db.execute("ALTER TABLE runs ADD COLUMN project TEXT NOT NULL DEFAULT 'default'")
    db.execute("CREATE INDEX runs_project ON runs (project, id)")


@dataclass(frozen=True)
class RunRecord:
    id: int
    task: str
    model: str
    source: str
    status: str
    answer: str
    reason: str | None
    evidence: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    tokens: int = 0
    started: float = 0.0
    finished: float | None = None
    project: str = DEFAULT_PROJECT

    @property
    def ref(self) -> str:
        return f"run:{self.id}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.ref,
            "task": self.task,
            "model": self.model,
            "source": self.source,
            "status": self.status,
            "answer": self.answer,
            "reason": self.reason,
            "evidence": self.evidence,
            "turns": self.turns,
            "tokens": self.tokens,
            "started": self.started,
            "finished": self.finished,
            "project": self.project,
        }


class Runs:
    """The runs of one project of a home (`project=ALL`: of every project, for reading)."""

    def __init__(self, store: Engine, *, project: str | None = DEFAULT_PROJECT) -> None:
        self.store = store
        self.project = project if project is ALL else check_project(project)

    async def start(self, task: str, *, model: str = "", source: str = "run") -> int:
        project = writable_project(self.project)
        sql = "INSERT INTO runs (task, model, source, status, started, project) VALUES (?, ?, ?, ?, ?, ?) RETURNING id"
        values = [task, model, source, "running", time.time(), project]
        return await self.store.write(lambda db: int(db.execute(sql, values).fetchone()[0]))

    async def finish(
        self,
        run_id: int,
        *,
        status: str,
        answer: str = "",
        reason: str | None = None,
        evidence: Sequence[dict[str, Any]] = (),
        turns: Sequence[dict[str, Any]] = (),
        tokens: int = 0,
    ) -> RunRecord:
        """Record how run `run_id` ended; the run as recorded (its caller need not read it back)."""
        project = writable_project(self.project)
        if status not in STATUSES or status == "running":
            raise UsageError(f"a run ends as one of {', '.join(STATUSES[1:])}, not {status!r}")
        values = {
            "status": status,
            "answer": answer,
            "reason": reason,
            "evidence": json.dumps(list(evidence)),
            "turns": json.dumps(list(turns)),
            "tokens": tokens,
            "finished": time.time(),
        }

        def update(db: Any) -> list[dict[str, Any]]:
            return list(
                db.query(
                    "UPDATE runs SET status = ?, answer = ?, reason = ?, evidence = ?, turns = ?, tokens = ?,"
                    " finished = ? WHERE id = ? AND project = ? RETURNING *",
                    [*values.values(), run_id, project],
                )
            )

        rows = await self.store.write(update)
        if not rows:
            raise NotFoundError(f"no run {run_id}")
        return _record(rows[0])

    async def get(self, run_id: int | str) -> RunRecord:
        number = parse_run_id(run_id)
        where, args = in_project(self.project)
        sql = f"SELECT * FROM runs WHERE id = ?{where}"
        rows = await self.store.read(lambda db: list(db.query(sql, [number, *args])))
        if not rows:
            raise NotFoundError(f"no run {run_id}")
        return _record(rows[0])

    async def list(self, limit: int = 20) -> list[RunRecord]:
        where, args = in_project(self.project)
        sql = f"SELECT * FROM runs WHERE TRUE{where} ORDER BY id DESC LIMIT ?"
        rows = await self.store.read(lambda db: list(db.query(sql, [*args, limit])))
        return [_record(row) for row in rows]


def parse_run_id(run_id: int | str) -> int:
    """`7`, `"7"` and `"run:7"` all name run 7; anything else is a clear error."""
    text = str(run_id).removeprefix("run:")
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise NotFoundError(f"no run {run_id}: run ids look like run:7")
    return int(text)


def _record(row: dict[str, Any]) -> RunRecord:
    return RunRecord(
        id=row["id"],
        task=row["task"],
        model=row["model"],
        source=row["source"],
        status=row["status"],
        answer=row["answer"],
        reason=row["reason"],
        evidence=json.loads(row["evidence"]),
        turns=json.loads(row["turns"]),
        tokens=row["tokens"],
        started=row["started"],
        finished=row["finished"],
        project=row["project"],
    )
