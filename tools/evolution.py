"""The evolving memory's tools: the procedures for a task, feedback on a run, and its upkeep.

`memory_procedures` lets a model (or any MCP client) ask which distilled
procedures fit a task before it starts; `memory_feedback` gives a run or an
episode its outcome, which is what refinement learns from. Both are plain
typed async functions over `memory.evolution.evolution.Evolution`; servers/memory.py
serves them beside the other memory verbs.

`refine` and `consolidate` are the upkeep `loci memory refine` and `loci
memory consolidate` do from the shell, for a client to start: they report
their progress to the callback they are given (servers/memory.py turns it
into MCP progress, or a task's, servers/tasks.py), and `all()` leaves them
out, since they are served as the long jobs they are.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from loci.memory.evolution.evolution import Evolution
from loci.memory.jobs.worker import Worker

__all__ = ["EvolutionTools", "Progress"]

# Progress so far: done, out of a total when known, and what it is.
Progress = Callable[[float, float | None, str], Awaitable[None]]


class EvolutionTools:
    def __init__(self, evolution: Evolution) -> None:
        self.evolution = evolution

    async def memory_procedures(self, task: str = "", k: int = 3) -> list[dict[str, Any]]:
        """The distilled procedures (recipes of steps that worked before) that fit a task, active ones first.

        Each has its id (mem:N), status (active or probationary), text, steps and measured success.
        Name the id in your state when you follow one, so its success is counted."""
        return await self.evolution.procedures(task, k, record=True)

    async def memory_feedback(self, target: str, outcome: str, note: str = "") -> dict[str, Any]:
        """Say how a run went, so the memory learns from it.

        target: the run (run:12) or its episode (mem:40); outcome: good, bad, or a number from 0 to 1.
        The same feedback again counts once; a different one replaces the earlier verdict."""
        return await self.evolution.episodes.feedback(target, outcome, note, bare="mem")

    async def refine(self, max_jobs: int | None = None, progress: Progress | None = None) -> dict[str, Any]:
        """Run the project's queued refinement jobs now (those a dead worker left included), each reported
        to `progress` as it ends; what ran and the queue of those jobs' kinds after."""
        handlers = self.evolution.handlers()
        worker, jobs, kinds = Worker(self.evolution.jobs, handlers), self.evolution.jobs, tuple(handlers)
        total = (await jobs.counts(kinds))["queued"]
        if max_jobs is not None:
            total = min(total, max(0, max_jobs))

        async def ran(count: int) -> None:
            if progress is not None:
                await progress(count, max(total, count), "refinement jobs run")

        done = await worker.drain(max_jobs, on_job=ran)
        return {"ran": done, "queue": await jobs.counts(kinds)}

    async def consolidate(self, dry_run: bool = False, progress: Progress | None = None) -> dict[str, Any]:
        """One consolidation pass (decay, prune, promote or retire procedures), or with `dry_run` its plan."""
        if progress is not None:
            await progress(0, 1, "planning the consolidation" if dry_run else "consolidating")
        result = await self.evolution.consolidate(dry_run=dry_run)
        if progress is not None:
            await progress(1, 1, f"{result['changes']} changes" + (" planned" if dry_run else ""))
        return result

    def all(self) -> list[Any]:
        return [self.memory_procedures, self.memory_feedback]
