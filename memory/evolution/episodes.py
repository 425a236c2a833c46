"""Episodes: one run's trajectory in the graph, and the feedback on it.

`Episodes.write` is formation, the cheap synchronous stage of evolution. In
one transaction it adds the episodic node (task, steps with their tools,
arguments and the memory ids they recalled and used), indexes it in
`memory_episodes` with the signature of its step sequence, links it to the
facts it used (`ground`), links facts used in the same step (`related`, the
weight growing with the number of steps that used both), counts a use of
each, and queues the episode's refinement job. The job runs later, in a
worker (memory/jobs/worker.py); formation never waits for it.

An episode's outcome is a number in [0, 1] (1 success, 0 failure) or NULL:
until feedback arrives it is unknown, not a success. The same feedback again
is counted once; a different one replaces the earlier verdict, and the
refinement it queues first undoes what the earlier one did
(memory/evolution/revise.py). Feedback queues the refinement that the
outcome drives.

The signature of a step sequence is the tools of the steps that did not
fail, each with the shape of its arguments (names and value types), e.g.
`context_search(query:str) > context_read(end:int,id:str,start:int)`.
Distillation groups episodes by it.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import sqlite_utils

from loci.memory.engines.dialects import dialect_of
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.evolution.params import DEFAULT_PARAMS, EvolutionParams
from loci.memory.graph.graph import Graph
from loci.memory.graph.ops import NewNode, fetch_nodes, insert_nodes, live_node, log_event, upsert_edge
from loci.memory.graph.records import MAX_NOTE_CHARS, node_ref, parse_node_id
from loci.memory.jobs.queue import Jobs
from loci.memory.projects import ALL, writable_project

__all__ = ["Episode", "Episodes", "Step", "parse_outcome", "step_signature"]

ARGUMENT_CHARS = 400
# What an episode keeps of its run: the task (in its text and its meta) and the first steps.
TASK_CHARS = 8_000
MAX_STEPS = 50
OUTCOME_WORDS = {"good": 1.0, "success": 1.0, "yes": 1.0, "bad": 0.0, "failure": 0.0, "fail": 0.0, "no": 0.0}


@dataclass(frozen=True)
class Step:
    """One step of a run: its tool and arguments, the memories it was shown and those it used."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    recalled: tuple[int, ...] = ()
    used: tuple[int, ...] = ()
    ok: bool = True

    def shape(self) -> str:
        names = ",".join(f"{k}:{_type_name(v)}" for k, v in sorted(self.arguments.items()))
        return f"{self.tool}({names})"


@dataclass(frozen=True)
class Episode:
    task: str
    steps: Sequence[Step] = ()
    outcome: float | None = None
    feedback: str = ""
    run_id: int | None = None


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "num", str: "str", list: "list", dict: "obj"}.get(type(value), "any")


def step_signature(steps: Sequence[Step]) -> str:
    return " > ".join(step.shape() for step in steps if step.ok)


def parse_outcome(outcome: object) -> float:
    """`good`/`bad` (or success/failure) or a number in [0, 1]; a clear `UsageError` for anything else."""
    if isinstance(outcome, str) and outcome.strip().casefold() in OUTCOME_WORDS:
        return OUTCOME_WORDS[outcome.strip().casefold()]
    try:
        value = float(outcome)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise UsageError(f"the outcome {outcome!r} is not good, bad or a number between 0 and 1") from None
    if not 0.0 <= value <= 1.0 or math.isnan(value):
        raise UsageError(f"the outcome {outcome!r} is outside [0, 1]; use 1 for success, 0 for failure")
    return value


class Episodes:
    """Writes episodes (formation) and takes feedback on them, over one `Graph`."""

    def __init__(self, graph: Graph, params: EvolutionParams = DEFAULT_PARAMS, *, jobs: Jobs | None = None) -> None:
        self.graph = graph
        self.jobs = jobs or Jobs(graph.store, project=graph.project)  # where an episode's refinement is queued
        self.params = params

    async def write(self, episode: Episode, cause: str | None = None) -> int:
        """Add the episode and its formation edges, queue its refinement; returns the episode's node id."""
        if not isinstance(episode.task, str) or not episode.task.strip():
            raise UsageError("an episode needs its task")
        outcome = None if episode.outcome is None else parse_outcome(episode.outcome)
        return await self.graph.store.write(lambda db: self._write(db.conn, episode, outcome, cause))

    def _write(self, conn: sqlite3.Connection, episode: Episode, outcome: float | None, cause: str | None) -> int:
        now = time.time()
        taken = conn.execute("SELECT 1 FROM memory_episodes WHERE run_id = ?", [episode.run_id]).fetchone()
        if episode.run_id is not None and taken:
            raise UsageError(f"run {episode.run_id} already has an episode")
        cited = {i for s in episode.steps for i in (*s.recalled, *s.used)}
        project = writable_project(self.graph.project)
        live = fetch_nodes(conn, cited, project)
        steps = [_step_dict(s, live) for s in episode.steps[:MAX_STEPS]]
        # The text is what recall searches: the task and a mark that tells episodes apart, no label words
        # ("Episode", "run") that every query holding them would match.
        tag = f"r{episode.run_id}" if episode.run_id is not None else f"e{_next_number(conn)}"
        meta = {
            "run_id": episode.run_id,
            "task": episode.task[:TASK_CHARS],
            "steps": steps,
            "unknown_ids": sorted(cited - set(live)),
        }
        if len(episode.task) > TASK_CHARS or len(episode.steps) > MAX_STEPS:
            meta["cut"] = {"task_chars": len(episode.task), "steps": len(episode.steps)}
        text = f"{episode.task.strip()}"[: TASK_CHARS - len(tag) - 3] + f" [{tag}]"
        cause = cause or f"episode {tag}"
        [(node_id, created)] = insert_nodes(conn, [NewNode(text, "episodic", meta)], cause, project=project)
        if not created:
            raise UsageError(f"an episode with the text {text[:60]!r} exists already")
        signature = step_signature(episode.steps)
        status = "unknown" if outcome is None else ("success" if outcome >= self.params.success_at else "failure")
        conn.execute("UPDATE memory_nodes SET status = ? WHERE id = ?", [status, node_id])
        conn.execute(
            "INSERT INTO memory_episodes (node, run_id, signature, outcome, feedback, feedback_at, created)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                node_id,
                episode.run_id,
                _digest(signature),
                outcome,
                episode.feedback or None,
                now if outcome is not None else None,
                now,
            ],
        )
        self._form(conn, node_id, steps, live, cause)
        stage = "outcome" if outcome is not None else "formed"
        self.jobs.add(conn, "refine", {"episode": node_id}, f"refine:{node_id}:{stage}")
        return node_id

    def _form(
        self, conn: sqlite3.Connection, episode: int, steps: list[dict[str, Any]], live: dict, cause: str
    ) -> None:
        used = list(dict.fromkeys(i for s in steps for i in s["used"]))
        for node_id in used:
            kind = live[node_id].kind
            if kind == "semantic":
                upsert_edge(conn, episode, node_id, "ground", weight=self.params.ground_weight, cause=cause)
            else:
                upsert_edge(conn, episode, node_id, "related", label="used", weight=1.0, cause=cause)
        pairs: Counter[tuple[int, int]] = Counter()
        for step in steps:
            facts = sorted(i for i in set(step["used"]) if live[i].kind == "semantic")
            pairs.update(combinations(facts, 2))
        now = time.time()
        for (a, b), count in pairs.items():
            edge_id = _linked(conn, a, b)
            if edge_id is None and _dropped(conn, a, b):
                continue  # interference dropped this link; only a success (repair) brings it back
            if edge_id is None:
                weight = min(1.0, self.params.form_weight + self.params.form_step * (count - 1))
                edge_id = upsert_edge(conn, a, b, "related", weight=weight, cause=cause)[0].id
            conn.execute("UPDATE memory_edges SET uses = uses + ?, last_used = ? WHERE id = ?", [count, now, edge_id])
        conn.executemany(
            "UPDATE memory_nodes SET uses = uses + 1, last_used = ? WHERE id = ?", [(now, i) for i in used]
        )

    async def feedback(self, target: object, outcome: object, note: str = "", *, bare: str = "run") -> dict[str, Any]:
        """Record the outcome of a run or an episode (`run:12`, `mem:40`; a bare number is a `bare` id)."""
        value = parse_outcome(outcome)
        note = (note or "").strip()
        if len(note) > MAX_NOTE_CHARS:
            raise UsageError(f"the note has {len(note):,} characters, over the limit of {MAX_NOTE_CHARS:,}")
        return await self.graph.store.write(lambda db: self._feedback(db.conn, target, value, note, bare))

    def _feedback(self, conn: sqlite3.Connection, target: object, value: float, note: str, bare: str) -> dict:
        episode = resolve_episode(conn, target, bare, self.graph.project)
        row = conn.execute("SELECT outcome, feedback FROM memory_episodes WHERE node = ?", [episode]).fetchone()
        result = {"episode": node_ref(episode), "outcome": value, "counted": True}
        key = f"refine:{episode}:outcome"
        if row[0] is not None:
            if row[0] == value and (row[1] or "") in ("", note):
                return {**result, "counted": False, "note": "this feedback was already counted"}
            revisions = conn.execute(
                "SELECT count(*) FROM memory_events WHERE node = ? AND op = 'feedback'", [episode]
            ).fetchone()[0]
            key = f"refine:{episode}:revised{revisions + 1}:outcome"  # its refinement undoes the earlier verdict
            result["replaced"] = row[0]
        status = "success" if value >= self.params.success_at else "failure"
        conn.execute(
            "UPDATE memory_episodes SET outcome = ?, feedback = ?, feedback_at = ? WHERE node = ?",
            [value, note or None, time.time(), episode],
        )
        conn.execute("UPDATE memory_nodes SET status = ? WHERE id = ?", [status, episode])
        before = None if row[0] is None else {"outcome": row[0], "note": row[1] or ""}
        log_event(
            conn, "feedback", node=episode, before=before, after={"outcome": value, "note": note}, cause="feedback"
        )
        self.jobs.add(conn, "refine", {"episode": episode}, key)
        return result

    async def get(self, target: object, bare: str = "mem") -> dict[str, Any]:
        def read(db: sqlite_utils.Database) -> dict[str, Any]:
            node = resolve_episode(db.conn, target, bare, self.graph.project)
            rows = list(db.query("SELECT * FROM memory_episodes WHERE node = ?", [node]))
            return rows[0]

        return await self.graph.store.read(read)


def resolve_episode(conn: sqlite3.Connection, target: object, bare: str = "run", project: str | None = ALL) -> int:
    """The episode node of `project` meant by `run:12`, `mem:40` or a bare number; `NotFoundError` when there
    is none. A run or a node of another project reads exactly as one that does not exist."""
    node_id = _episode(conn, target, bare, project)
    if project is not ALL:
        live_node(conn, node_id, project)
    return node_id


def _episode(conn: sqlite3.Connection, target: object, bare: str, project: str | None) -> int:
    text = str(target).strip()
    mine, scope = ("", []) if project is ALL else (" AND n.project = ?", [project])
    if text.startswith("run:") or (bare == "run" and text.isdigit()):
        number = text.removeprefix("run:")
        if not number.isdigit():
            raise NotFoundError(f"{target!r} is not a run id; run ids look like run:12 or 12")
        row = conn.execute(
            f"SELECT e.node FROM memory_episodes e JOIN memory_nodes n ON n.id = e.node WHERE e.run_id = ?{mine}",
            [int(number), *scope],
        ).fetchone()
        if row is None:
            has_run = _has_run(conn, int(number), project)
            why = (
                "it left no episode (was it run with --no-episode, or is it still running?)"
                if has_run
                else "no such run"
            )
            raise NotFoundError(f"run {number}: {why}")
        return row[0]
    node_id = parse_node_id(text)
    row = conn.execute(
        f"SELECT e.node FROM memory_episodes e JOIN memory_nodes n ON n.id = e.node WHERE e.node = ?{mine}",
        [node_id, *scope],
    ).fetchone()
    if row is None:
        exists = conn.execute(f"SELECT n.kind FROM memory_nodes n WHERE n.id = ?{mine}", [node_id, *scope]).fetchone()
        raise NotFoundError(
            f"{node_ref(node_id)} is a {exists[0]} memory, not an episode"
            if exists
            else f"no memory {node_ref(node_id)}"
        )
    return node_id


def _has_run(conn: sqlite3.Connection, run_id: int, project: str | None) -> bool:
    """Whether `project` (any, for `ALL`) has the run `run_id`, in a home that has a runs table."""
    if not conn.execute(dialect_of(conn).has_table(), ["runs"]).fetchone():
        return False
    mine, scope = ("", []) if project is ALL else (" AND project = ?", [project])
    return conn.execute(f"SELECT 1 FROM runs WHERE id = ?{mine}", [run_id, *scope]).fetchone() is not None


def _linked(conn: sqlite3.Connection, a: int, b: int) -> int | None:
    """The live `related` edge between two nodes, in either direction."""
    row = conn.execute(
        "SELECT id FROM memory_edges WHERE deleted IS NULL AND kind = 'related' AND label = ''"
        " AND ((src = ? AND dst = ?) OR (src = ? AND dst = ?))",
        [a, b, b, a],
    ).fetchone()
    return row[0] if row else None


def _dropped(conn: sqlite3.Connection, a: int, b: int) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM memory_edges WHERE deleted IS NOT NULL AND kind = 'related' AND label = ''"
            " AND ((src = ? AND dst = ?) OR (src = ? AND dst = ?)) LIMIT 1",
            [a, b, b, a],
        ).fetchone()
        is not None
    )


def _step_dict(step: Step, live: dict) -> dict[str, Any]:
    arguments = json.dumps(step.arguments, ensure_ascii=False, default=str)
    return {
        "tool": step.tool,
        "shape": step.shape(),
        "arguments": arguments if len(arguments) <= ARGUMENT_CHARS else arguments[:ARGUMENT_CHARS] + "…",
        "recalled": [i for i in step.recalled if i in live],
        "used": [i for i in dict.fromkeys(step.used) if i in live],
        "ok": step.ok,
    }


def _next_number(conn: sqlite3.Connection) -> int:
    """One more than the episodes there are; two writers at once count one after the other (the dialect's
    `one_at_a_time`), so they never take the same number."""
    if lock := dialect_of(conn).one_at_a_time("memory_episodes"):
        conn.execute(lock)
    return conn.execute("SELECT count(*) FROM memory_episodes").fetchone()[0] + 1


def _digest(signature: str) -> str:
    return hashlib.sha256(signature.encode()).hexdigest()[:24] + "|" + signature[:500]
