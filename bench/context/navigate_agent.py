"""The navigate workload through the whole turn loop, with a scripted model.

`bench/context/navigate.py` measures the tools alone. This runs the same questions
through `Agent`: prompts built from budgeted regions, actions validated,
tools dispatched through the MCP host, observations recorded. The scripted
model reads each prompt as a model would (the latest observation is in it)
and answers deterministically: search, read the lines of the hits in turn,
answer with the line as evidence. What it measures is the runtime's own
cost per question: turns, tool calls and prompt tokens.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from loci.memory.context.store import ContextStore
from loci.runtime.host.host import McpHost
from loci.runtime.loop.agent import Agent
from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.prompt.build import RegionSizes
from loci.runtime.prompt.notes import NoteMode
from loci.runtime.prompt.regions import AnswerStyle
from loci.servers.context import build_context_server
from loci.tools.context import ContextTools

__all__ = ["navigate_with_agent"]

MAX_TURNS = 8
HIT = re.compile(r'"id": "(doc:\d+)",\s*"line": (\d+)')


class Reader:
    """A scripted policy for one question: search, then read hit lines until the code shows."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.pattern = re.compile(rf"access code for vault {re.escape(name)} is (\S+?)\.")
        self.hits: list[tuple[str, int]] = []
        self.reading: tuple[str, int] | None = None

    def __call__(self, request: Request) -> dict[str, Any]:
        prompt = request.messages[-1]["content"]
        state = f"find the access code for vault {self.name}"
        if "Result of context_search" in prompt and not self.hits:
            self.hits = [(ref, int(line)) for ref, line in HIT.findall(prompt.split("Result of context_search", 1)[1])]
        if self.reading and (match := self.pattern.search(prompt)):
            ref, line = self.reading
            return {"state": state, "answer": match.group(1), "evidence": [{"id": ref, "start": line, "end": line}]}
        if self.reading is None and not self.hits:
            return {
                "state": state,
                "tool": "context_search",
                "arguments": {"query": f"access code vault {self.name}", "k": 5},
            }
        if self.hits and "last turn" not in prompt:
            self.reading = self.hits.pop(0)
            ref, line = self.reading
            return {"state": state, "tool": "context_read", "arguments": {"id": ref, "start": line, "end": line}}
        return {"state": state, "answer": "not found", "evidence": []}


async def navigate_with_agent(
    contexts: ContextStore, facts: list[tuple[str, str]], count: Callable[[str], int]
) -> dict[str, Any]:
    per_question = []
    async with McpHost() as host:
        await host.add("context", build_context_server(ContextTools(contexts)))
        for name, code in facts:
            model = ScriptedModel([Reader(name)], repeat_last=True, context_window=8_192, counter=count)
            config = RunConfig(
                limits=Limits(max_turns=MAX_TURNS),
                sizes=RegionSizes.for_window(8_192),
                note_mode=NoteMode.EXTRACT,
                answer_style=AnswerStyle.JSON,
            )
            agent = Agent(model, host, contexts, config)
            result = await agent.run(f"What is the access code for vault {name}?", objects=[])
            prompts = [sum(count(m["content"]) for m in call.messages) for call in model.calls]
            per_question.append(
                {
                    "found": result.answer == code and result.status == "done",
                    "turns": len(result.turns),
                    "tool_calls": result.tool_calls,
                    "prompt_tokens": sum(prompts),
                    "max_prompt_tokens": max(prompts),
                }
            )
    n = max(1, len(per_question))
    return {
        "found": sum(q["found"] for q in per_question),
        "turns_per_question": round(sum(q["turns"] for q in per_question) / n, 2),
        "tool_calls_per_question": round(sum(q["tool_calls"] for q in per_question) / n, 2),
        "prompt_tokens_per_question": round(sum(q["prompt_tokens"] for q in per_question) / n, 1),
        "max_prompt_tokens": max((q["max_prompt_tokens"] for q in per_question), default=0),
    }
