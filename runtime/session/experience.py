"""Memory in the loop: what a run is shown from memory, and the episode it leaves.

Before a run, `Experience.before` recalls from the graph the top live
procedures (active first) and the top facts for the task, and adds them
under the task, cut to `loop_share` of the task region's budget, each with
its `mem:N` id, inside the block of memory/graph/quoted.py that says they
are stored notes, quoted as data, not instructions. The run's record keeps the task as given; only the prompt
carries the recalled lines.

After a run that ends with an answer (done or partial; a failed or
cancelled run leaves none), `Experience.after` takes the run's record as
`Runs.finish` wrote it (memory/records/runs.py) and writes its episode
(memory/evolution/episodes.py): one step per tool turn, with the tool, its
arguments, the memory ids the step was shown (the brief for the first step,
then the ids named in each memory tool's result, which the turn record keeps
as `refs`) and the ids it used (those it named in its arguments or its
working state; the ids named in the answer count for the last step). A step
whose tool returned an error does not count in the episode's step sequence.
The outcome comes from the evaluator when one is given, else it stays
unknown until feedback arrives. Writing the episode queues its refinement
job; the caller's worker runs it
later, or `loci memory refine` does.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from loci.memory.errors import UsageError
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution, Language
from loci.memory.graph.quoted import quote_notes
from loci.memory.graph.recall import Recall
from loci.memory.graph.records import node_refs
from loci.memory.jobs.worker import Worker
from loci.memory.records.runs import RunRecord
from loci.runtime.models.base import Model, Request

__all__ = [
    "Brief",
    "Evaluator",
    "Experience",
    "language_for",
    "mem_ids",
    "steps_from_turns",
]

Evaluator = Callable[[RunRecord], Awaitable[float | None] | float | None]


@dataclass(frozen=True)
class Brief:
    """The task as the agent reads it: the question as given, the lines from memory for it (quoted), their ids."""

    question: str
    text: str = ""  # the notes recalled for the question, in their quoted block (memory.graph.quoted)
    ids: tuple[int, ...] = field(default_factory=tuple)

    @property
    def task(self) -> str:
        """The question with the notes under it, as one text (a job that asks its own way reads it so)."""
        return f"{self.question}\n\n{self.text}" if self.text else self.question


def mem_ids(value: Any) -> list[int]:
    """The memory ids (`mem:N`) named anywhere in a value, in order, once each."""
    return node_refs(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))


def steps_from_turns(turns: list[dict[str, Any]], shown: tuple[int, ...]) -> list[Step]:
    """The episode's steps from a run's turn records: each tool turn with the ids it was shown and used."""
    steps: list[Step] = []
    recalled: list[int] = list(shown)
    for turn in turns:
        cited = mem_ids([turn.get("arguments"), turn.get("state", "")])
        if not turn.get("tool"):
            cited += mem_ids(turn.get("answer", ""))
            if steps:
                last = steps[-1]
                steps[-1] = Step(last.tool, last.arguments, last.recalled, (*last.used, *cited), last.ok)
            elif cited:
                steps.append(Step("answer", {}, tuple(recalled), tuple(cited), ok=False))
            continue
        seen = list(turn.get("refs") or ()) if str(turn["tool"]).startswith("memory") else []
        ok = not turn.get("error")
        steps.append(Step(turn["tool"], dict(turn.get("arguments") or {}), tuple(recalled), tuple(cited), ok))
        recalled = seen
    return steps


class Experience:
    """The memory side of a session's runs: the brief before, the episode after."""

    def __init__(
        self,
        evolution: Evolution,
        count_tokens: Callable[[str], int],
        task_tokens: int,
        *,
        episodes: bool = True,
        evaluator: Evaluator | None = None,
        worker: Worker | None = None,
    ) -> None:
        self.evolution = evolution
        self.count_tokens = count_tokens
        self.budget = max(0, int(task_tokens * evolution.params.loop_share))
        self.episodes = episodes
        self.evaluator = evaluator
        self.worker = worker  # the session's background worker, woken when an episode's refinement is queued

    async def before(self, task: str) -> Brief:
        """The task with the top procedures and facts for it under it, cut to the budget."""
        params = self.evolution.params
        lines: list[tuple[int, str]] = []
        try:
            for proc in await self.evolution.procedures(task, params.loop_procedures, record=True):
                said = " ".join(str(proc["text"]).split())
                lines.append((int(proc["id"][4:]), f"- {proc['id']} (procedure, {proc['status']}): {said}"))
            facts = await Recall(self.evolution.graph).recall(task, k=params.loop_facts, kinds=["semantic"])
        except UsageError:  # a task with no words to recall by
            return Brief(task)
        lines += [(r.node.id, f"- {r.node.ref}: {' '.join(r.node.text.split())}") for r in facts]
        head = "Name the id, such as mem:12, in your state when you use one."
        while lines:
            text = quote_notes("\n".join(line for _, line in lines), head)
            if self.count_tokens(text) <= self.budget:
                return Brief(task, text, tuple(i for i, _ in lines))
            lines.pop()
        return Brief(task)

    async def after(self, record: RunRecord, brief: Brief, *, used: Sequence[int] = ()) -> int | None:
        """Write the episode of `record` (the run as `Runs.finish` wrote it), unless episodes are off; its node id.

        `used` are memories the answer rests on that the turns do not name (read as a document); the last
        step used them."""
        if not self.episodes:
            return None
        steps = steps_from_turns(record.turns, brief.ids)
        if used:
            last = steps[-1] if steps else Step("answer", {}, brief.ids, (), ok=False)
            steps[-1:] = [Step(last.tool, last.arguments, last.recalled, (*last.used, *used), last.ok)]
        outcome = None
        if self.evaluator is not None:
            outcome = self.evaluator(record)
            if isinstance(outcome, Awaitable):
                outcome = await outcome
        episode = Episode(record.task, steps, outcome=outcome, run_id=record.id)
        node = await self.evolution.episodes.write(episode, cause=f"run:{record.id}")
        if self.worker is not None:
            self.worker.wake()
        return node


def language_for(model: Model, max_tokens: int = 160) -> Language:
    """The language callable the background worker gets: one free-text reply from `model`."""

    async def complete(prompt: str) -> str:
        reply = await model.generate(
            Request(messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens, purpose="refine")
        )
        return reply.text

    return complete
