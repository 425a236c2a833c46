"""The evolving memory's tools: the procedures for a task, and feedback on a run.

`memory_procedures` lets a model (or any MCP client) ask which distilled
procedures fit a task before it starts; `memory_feedback` gives a run or an
episode its outcome, which is what refinement learns from. Both are plain
typed async functions over `memory.evolution.evolution.Evolution`; servers/memory.py
serves them beside the other memory verbs.
"""

from __future__ import annotations

from typing import Any

from loci.memory.evolution.evolution import Evolution

__all__ = ["EvolutionTools"]


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

    def all(self) -> list[Any]:
        return [self.memory_procedures, self.memory_feedback]
