"""What the page shows of the memory's work: procedures, the job queue, digest jobs.

Procedures are listed whatever their status (probationary, active, retired),
each with its success posterior (the same Beta mean consolidation reads,
memory/evolution/consolidate.py) and the episodes it was distilled from
(its `distill` edges, with their runs and outcomes). The job queue shows its
counts by status and the latest jobs, a failed one with its error. Digest
jobs show how far each got: the chunk and tokens of its last checkpoint.
"""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils

from loci.memory.evolution.consolidate import posterior
from loci.memory.evolution.params import DEFAULT_PARAMS
from loci.memory.graph.graph import Graph
from loci.memory.graph.records import NODE_COLUMNS, node_from_row, node_ref
from loci.memory.jobs.queue import Jobs
from loci.memory.projects import in_project
from loci.memory.records.digest_jobs import DigestJobs

__all__ = ["WorkView"]

LISTED = 200


def _sources(db: sqlite_utils.Database, procedure: int) -> list[dict[str, Any]]:
    sql = (
        "SELECT n.id, x.run_id, x.outcome FROM memory_edges e JOIN memory_nodes n ON n.id = e.dst"
        " LEFT JOIN memory_episodes x ON x.node = n.id"
        " WHERE e.src = ? AND e.kind = 'distill' AND e.deleted IS NULL ORDER BY n.id LIMIT 50"
    )
    return [{**row, "id": node_ref(row["id"])} for row in db.query(sql, [procedure])]


def _procedures(db: sqlite_utils.Database, project: str | None) -> list[dict[str, Any]]:
    mine, params = in_project(project)
    sql = (
        f"SELECT {NODE_COLUMNS} FROM memory_nodes WHERE kind = 'procedural' AND deleted IS NULL{mine}"
        " ORDER BY CASE status WHEN 'active' THEN 0 WHEN 'probationary' THEN 1 ELSE 2 END, successes DESC, id LIMIT ?"
    )
    shown = []
    for row in db.conn.execute(sql, [*params, LISTED]).fetchall():
        node = node_from_row(row)
        mean, spread = posterior(node.successes, node.failures, DEFAULT_PARAMS)
        shown.append(
            {
                "id": node.ref,
                "status": node.status,
                "text": node.text,
                "successes": node.successes,
                "failures": node.failures,
                "success_mean": round(mean, 4),
                "success_sd": round(spread, 4),
                "sources": _sources(db, node.id),
            }
        )
    return shown


def _latest_jobs(db: sqlite_utils.Database, project: str | None) -> list[dict[str, Any]]:
    mine, params = in_project(project)
    sql = (
        "SELECT id, kind, key, status, attempts, max_attempts, error, created, updated, finished FROM jobs"
        f" WHERE TRUE{mine}"
        " ORDER BY CASE status WHEN 'running' THEN 0 WHEN 'failed' THEN 1 WHEN 'queued' THEN 2 ELSE 3 END, id DESC"
        " LIMIT ?"
    )
    return list(db.query(sql, [*params, LISTED]))


class WorkView:
    """Procedures, jobs and digest jobs of one home; reads only."""

    def __init__(self, graph: Graph) -> None:
        self.store = graph.store
        self.project = graph.project
        self.jobs = Jobs(graph.store, project=graph.project)
        self.digests = DigestJobs(graph.store, project=graph.project)

    async def procedures(self) -> list[dict[str, Any]]:
        return await self.store.read(lambda db: _procedures(db, self.project))

    async def queue(self) -> dict[str, Any]:
        counts = await self.jobs.counts()
        latest = await self.store.read(lambda db: _latest_jobs(db, self.project))
        return {"counts": counts, "jobs": latest}

    async def digest_jobs(self) -> list[dict[str, Any]]:
        shown = []
        for job in await self.digests.list(LISTED):
            state = job.state or {}
            shown.append(
                {
                    "id": job.id,
                    "status": job.shown_status,
                    "question": job.question,
                    "strategy": job.strategy,
                    "model": job.model,
                    "files": [f.get("path") for f in job.files],
                    "chunk": state.get("chunk", 0),
                    "tokens_read": state.get("tokens_read", 0),
                    "error": job.error,
                    "result": json.dumps(job.result)[:400] if job.result else None,
                    "updated": job.updated,
                }
            )
        return shown
