"""What the page shows of runs: the list, one run in full, and feedback on it.

A run's row (memory/records/runs.py) holds its task, status, answer, cited evidence
and one record per turn; the turn records hold the tool, its arguments, the
observation's id and size, and the prompt's tokens per region with how many
the model evaluated against how many it reused. The page adds what lives
elsewhere: the run's episode (memory_episodes, with its outcome and the
facts it was grounded in) and the cited lines themselves, read back from the
context store. Feedback is shown as a verdict and a note, apart: `verdict` is
`good` or `bad` as the episode's status says (success or failure, by the
evolution's `success_at`), None before any feedback, and `feedback` is the
note the person wrote.

Feedback is the one write the page makes, and it is the same write as
`loci feedback`: `Evolution(graph).episodes.feedback(run, outcome, note)`.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils

from loci.memory.context.store import ContextStore
from loci.memory.errors import LociError
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph
from loci.memory.graph.records import node_ref
from loci.memory.params import in_chunks
from loci.memory.records.runs import Runs, parse_run_id

__all__ = ["MAX_CITED_TOKENS", "VERDICTS", "RunsView", "verdict"]

MAX_CITED_TOKENS = 1_000
VERDICTS = {"success": "good", "failure": "bad"}
LISTED = 200


def _episode_rows(db: sqlite_utils.Database, run_ids: list[int]) -> dict[int, dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    for chunk, marks in in_chunks(run_ids):
        sql = (
            "SELECT x.run_id, x.node, x.outcome, x.feedback, x.feedback_at, n.status, n.text FROM memory_episodes x"
            f" JOIN memory_nodes n ON n.id = x.node WHERE x.run_id IN ({marks})"
        )
        for row in db.query(sql, chunk):
            found[row["run_id"]] = {**row, "node": node_ref(row["node"])}
    return found


def verdict(episode: dict[str, Any]) -> str | None:
    """What the feedback said of a run, as its episode's status has it (`success` at or above the evolution's
    `success_at`): `good`, `bad`, or None while it is not judged."""
    return VERDICTS.get(episode.get("status") or "") if episode.get("outcome") is not None else None


class RunsView:
    """Runs, their episodes and their cited lines for the page; `feedback` is its one write."""

    def __init__(self, graph: Graph) -> None:
        self.store = graph.store
        self.runs = Runs(graph.store, project=graph.project)
        self.contexts = ContextStore(graph.store, project=graph.project)
        self.episodes = Evolution(graph).episodes  # as `loci feedback` takes it

    async def list(self, limit: int = LISTED) -> list[dict[str, Any]]:
        records = await self.runs.list(max(1, min(int(limit), 1_000)))
        episodes = await self.store.read(lambda db: _episode_rows(db, [r.id for r in records]))
        return [
            {
                "id": r.ref,
                "task": r.task,
                "status": r.status,
                "reason": r.reason,
                "model": r.model,
                "source": r.source,
                "started": r.started,
                "finished": r.finished,
                "turns": len(r.turns),
                "tokens": r.tokens,
                "outcome": episodes.get(r.id, {}).get("outcome"),
                "verdict": verdict(episodes.get(r.id, {})),
                "feedback": episodes.get(r.id, {}).get("feedback"),
            }
            for r in records
        ]

    async def get(self, ref: str) -> dict[str, Any]:
        record = await self.runs.get(ref)
        episodes = await self.store.read(lambda db: _episode_rows(db, [record.id]))
        episode = episodes.get(record.id)
        if episode is not None:
            episode["grounds"] = await self._grounds(episode["node"])
            episode["verdict"] = verdict(episode)
        return {
            **record.to_dict(),
            "evidence": [await self._cited(item) for item in record.evidence],
            "episode": episode,
        }

    async def feedback(self, ref: str, outcome: object, note: str = "") -> dict[str, Any]:
        """The same write as `loci feedback RUN outcome note`."""
        return await self.episodes.feedback(f"run:{parse_run_id(ref)}", outcome, note, bare="run")

    async def _cited(self, item: dict[str, Any]) -> dict[str, Any]:
        """A cited range with its lines, or with the reason they cannot be read."""
        shown = dict(item)
        try:
            span = await self.contexts.read(
                str(item["id"]), int(item.get("start") or 1), item.get("end"), max_tokens=MAX_CITED_TOKENS
            )
        except (LociError, KeyError, TypeError, ValueError) as exc:
            return {**shown, "text": None, "error": str(exc)}
        return {**shown, "text": span.text, "truncated": span.truncated}

    async def _grounds(self, episode: str) -> list[dict[str, Any]]:
        number = int(episode.removeprefix("mem:"))
        sql = (
            "SELECT e.kind, e.label, e.weight, n.id, n.kind AS node_kind, n.text FROM memory_edges e"
            " JOIN memory_nodes n ON n.id = e.dst WHERE e.src = ? AND e.deleted IS NULL ORDER BY e.weight DESC LIMIT 50"
        )
        rows = await self.store.read(lambda db: list(db.query(sql, [number])))
        return [{**row, "id": node_ref(row["id"])} for row in rows]
