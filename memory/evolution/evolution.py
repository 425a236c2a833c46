"""The evolving memory, in one object: episodes, jobs, refinement, consolidation.

`Evolution` binds one `Graph` to its parameters, its job queue (given, or one
of its own with the queue's default limits) and,
optionally, a language callable (`async (prompt) -> text`) that `runtime/`
passes in; `memory/` never imports a model. It gives:

- `episodes`: formation and feedback (memory/evolution/episodes.py);
- `handlers()`: the job handlers a `Worker` runs (`refine` per episode,
  `describe` to have the model rewrite a new procedure's text);
- `consolidate()`: a consolidation pass (memory/evolution/consolidate.py);
- `procedures(task)`: the live procedures for a task, active first;
- `history(ref)`: how a node or an edge came to be, with a procedure's
  source episodes and their runs.

Without a language callable, `describe` jobs are neither queued nor run
(another process with a model may run those it finds): the procedure keeps
the text of the deterministic rule (memory/evolution/distill.py). With one, the
job first waits until the foreground is idle (`Foreground.wait_idle`), asks
the model outside any transaction, then writes the new text together with
the job's completion.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Awaitable, Callable
from typing import Any

import sqlite_utils

from loci.memory.errors import NotFoundError, UsageError
from loci.memory.evolution.consolidate import apply_plan, plan, posterior
from loci.memory.evolution.episodes import Episodes
from loci.memory.evolution.params import DEFAULT_PARAMS, EvolutionParams
from loci.memory.evolution.refine import refine_episode
from loci.memory.graph.graph import Graph
from loci.memory.graph.ops import update_node
from loci.memory.graph.recall import Recall
from loci.memory.graph.records import NODE_COLUMNS, node_from_row, node_ref, parse_node_id
from loci.memory.graph.revisions import revisions
from loci.memory.jobs.queue import Job, Jobs
from loci.memory.jobs.worker import Foreground, Handler
from loci.memory.projects import in_project

__all__ = ["Evolution", "Language"]

Language = Callable[[str], Awaitable[str]]
LIVE_STATUSES = ("active", "probationary")
DESCRIBE_PROMPT = (
    "Write one or two sentences saying when to use this procedure and what it does. Tasks it solved:\n{tasks}\n"
    "Its steps: {steps}\nReply with the sentences only."
)


class Evolution:
    def __init__(
        self,
        graph: Graph,
        params: EvolutionParams = DEFAULT_PARAMS,
        *,
        language: Language | None = None,
        foreground: Foreground | None = None,
        jobs: Jobs | None = None,
    ) -> None:
        self.graph = graph
        self.params = params
        self.language = language
        self.foreground = foreground or Foreground()
        self.jobs = jobs or Jobs(graph.store, project=graph.project)
        self.episodes = Episodes(graph, params, jobs=self.jobs)

    def handlers(self) -> dict[str, Handler]:
        """The job kinds this evolution can run: `describe` only with a model, so a worker without one
        leaves those jobs queued for a process that has it."""
        found: dict[str, Handler] = {"refine": self.refine_job}
        if self.language is not None:
            found["describe"] = self.describe_job
        return found

    async def refine_job(self, job: Job) -> dict[str, Any]:
        episode = int(job.payload["episode"])
        count = job.key.endswith(":outcome")
        cause = f"job:{job.id} refine {node_ref(episode)}"
        return await self.jobs.complete(job, lambda conn: self.refine_now(conn, episode, count, cause))

    def refine_now(self, conn: sqlite3.Connection, episode: int, count_outcome: bool, cause: str) -> dict[str, Any]:
        """The refinement of one episode, inside the caller's transaction."""
        done = refine_episode(conn, episode, self.params, count_outcome=count_outcome, cause=cause)
        if done.procedure is not None and self.language is not None:
            self.jobs.add(conn, "describe", {"procedure": done.procedure}, f"describe:{done.procedure}")
        return done.as_dict()

    async def describe_job(self, job: Job) -> dict[str, Any]:
        node_id = int(job.payload["procedure"])
        graph = self.graph.in_project(job.project)
        try:
            node = await graph.get(node_id)
        except NotFoundError:  # merged or forgotten since: nothing to describe
            return await self.jobs.complete(job, lambda conn: {"skipped": f"{node_ref(node_id)} is gone"})
        assert self.language is not None, "describe jobs run only where a model is given (see handlers)"
        sources = await graph.store.read(lambda db: _node_history(db, node_id, job.project))
        tasks = "\n".join(f"- {s['task']}" for s in sources["sources"][:5])
        steps = "; ".join(node.meta.get("steps", []))
        await self.foreground.wait_idle()
        written = " ".join((await self.language(DESCRIBE_PROMPT.format(tasks=tasks, steps=steps))).split())[:400]
        if not written:
            return await self.jobs.complete(job, lambda conn: {"skipped": "the model wrote nothing"})
        text = f"{written} Steps: {steps}"
        cause = f"job:{job.id} describe {node.ref}"

        def effect(conn: sqlite3.Connection) -> dict[str, Any]:
            update_node(conn, node_id, text, cause)
            return {"procedure": node.ref, "chars": len(text)}

        return await self.jobs.complete(job, effect)

    async def consolidate(self, *, dry_run: bool = False, now: float | None = None) -> dict[str, Any]:
        """One consolidation pass (or only its plan, with `dry_run`); counts of what changed."""
        if dry_run:
            found = await self.graph.store.read(lambda db: plan(db.conn, self.params, now))
            return {**found.summary(), "dry_run": True}
        cause = f"consolidate@{time.time():.0f}"

        def write(db: sqlite_utils.Database) -> dict[str, Any]:
            return apply_plan(db.conn, plan(db.conn, self.params, now, count_edges=False), self.params, cause, now)

        return await self.graph.store.write(write)

    async def procedures(self, task: str = "", k: int = 5, *, record: bool = False) -> list[dict[str, Any]]:
        """The live procedures for `task` (all, by success, when no task is given), active first."""
        k = max(1, min(int(k), 50))
        if task and task.strip():
            found = await Recall(self.graph).recall(task, k=4 * k, kinds=["procedural"], record=record)
            rows = [(r.node, r.score) for r in found if r.node.status in LIVE_STATUSES]
        else:
            nodes = await self.graph.store.read(lambda db: _all_procedures(db, self.graph.project))
            rows = [(n, 0.0) for n in nodes]
        rows.sort(key=lambda item: (item[0].status != "active", -item[1]))
        return [_procedure_dict(node, score, self.params) for node, score in rows[:k]]

    async def history(self, ref: str) -> dict[str, Any]:
        """The events of a node (`mem:N`) or an edge (`edge:N`), oldest first, and a procedure's sources."""
        text = str(ref).strip()
        if text.startswith("edge:"):
            number = text.removeprefix("edge:")
            if not number.isdigit():
                raise UsageError(f"{ref!r} is not an edge id; edge ids look like edge:7")
            return await self.graph.store.read(lambda db: _edge_history(db, int(number), self.graph.project))
        return await self.graph.store.read(lambda db: _node_history(db, parse_node_id(text), self.graph.project))


def _all_procedures(db: sqlite_utils.Database, project: str | None) -> list[Any]:
    marks = ",".join("?" * len(LIVE_STATUSES))
    mine, params = in_project(project)
    sql = (
        f"SELECT {NODE_COLUMNS} FROM memory_nodes WHERE kind = 'procedural' AND deleted IS NULL"
        f" AND status IN ({marks}){mine} ORDER BY successes DESC, id LIMIT 500"
    )
    return [node_from_row(row) for row in db.conn.execute(sql, [*LIVE_STATUSES, *params])]


def _procedure_dict(node: Any, score: float, params: EvolutionParams) -> dict[str, Any]:
    mean, _ = posterior(node.successes, node.failures, params)
    return {
        "id": node.ref,
        "status": node.status,
        "text": node.text,
        "steps": node.meta.get("steps", []),
        "successes": node.successes,
        "failures": node.failures,
        "success_mean": round(mean, 4),
        "score": round(score, 4),
    }


def _events(db: sqlite_utils.Database, column: str, value: int) -> list[dict[str, Any]]:
    sql = f"SELECT id, at, op, node, edge, before, after, cause FROM memory_events WHERE {column} = ? ORDER BY id"
    rows = list(db.query(sql, [value]))
    for row in rows:
        for key in ("before", "after"):
            row[key] = json.loads(row[key]) if row[key] else None
    return rows


def _node_history(db: sqlite_utils.Database, node_id: int, project: str | None) -> dict[str, Any]:
    mine, params = in_project(project)
    row = db.conn.execute(
        f"SELECT kind, text, status, deleted FROM memory_nodes WHERE id = ?{mine}", [node_id, *params]
    ).fetchone()
    if row is None:
        raise NotFoundError(f"no memory {node_ref(node_id)}")
    sources = list(
        db.query(
            "SELECT n.id, n.meta, x.run_id, x.outcome, x.feedback FROM memory_edges e"
            " JOIN memory_nodes n ON n.id = e.dst JOIN memory_episodes x ON x.node = n.id"
            " WHERE e.src = ? AND e.kind = 'distill' ORDER BY n.id",
            [node_id],
        )
    )
    return {
        "id": node_ref(node_id),
        "kind": row[0],
        "text": row[1],
        "status": row[2],
        "forgotten": row[3] is not None,
        "events": _events(db, "node", node_id),
        "texts": revisions(db.conn, node_id),
        "sources": [
            {
                "episode": node_ref(s["id"]),
                "run_id": s["run_id"],
                "outcome": s["outcome"],
                "feedback": s["feedback"],
                "task": json.loads(s["meta"]).get("task", ""),
            }
            for s in sources
        ],
    }


def _edge_history(db: sqlite_utils.Database, edge_id: int, project: str | None) -> dict[str, Any]:
    mine, params = in_project(project, "n.project")
    row = db.conn.execute(
        "SELECT e.src, e.dst, e.kind, e.weight, e.deleted FROM memory_edges e JOIN memory_nodes n ON n.id = e.src"
        f" WHERE e.id = ?{mine}",
        [edge_id, *params],
    ).fetchone()
    if row is None:
        raise NotFoundError(f"no edge {edge_id}")
    return {
        "id": f"edge:{edge_id}",
        "src": node_ref(row[0]),
        "dst": node_ref(row[1]),
        "kind": row[2],
        "weight": row[3],
        "dropped": row[4] is not None,
        "events": _events(db, "edge", edge_id),
    }
