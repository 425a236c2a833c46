"""Fit-or-navigate, the repeated-call guard and the empty-answer retry on the bundled GGUF.

Where a behaviour needs the model to misbehave first (repeat a call, answer
with nothing), a thin wrapper gives those first replies and the real model
gives every reply after them, so what is tested is that the runtime steers
the real model to a right answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.models.base import Model, Reply, Request
from loci.runtime.models.wrapper import ModelWrapper
from loci.runtime.session.session import open_session

pytestmark = pytest.mark.model

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "harbor.md"
LONG = (
    "".join(f"line {i}: a routine entry about the weather and the tides\n" for i in range(1, 400))
    + "line 400: each plot costs 35 euros a season\n"
)
QUESTION = "How much does a plot cost?"


class FirstReplies(ModelWrapper):
    """The real model, except that the first requests matching `schema` get the given replies."""

    def __init__(self, model: Model, replies: list[str], *, structured: bool) -> None:
        super().__init__(model)
        self.replies, self.structured = list(replies), structured
        self.requests: list[Request] = []

    async def generate(self, request: Request) -> Reply:
        self.requests.append(request)
        if self.replies and (request.schema is not None) == self.structured:
            text = self.replies.pop(0)
            return Reply(text=text, prompt_tokens=0, completion_tokens=self.count_tokens(text))
        return await self.inner.generate(request)


async def test_the_bundled_model_sees_a_short_file_whole_and_navigates_a_long_one(tmp_path: Path, gguf: Model) -> None:
    long = tmp_path / "log.txt"
    long.write_text(LONG, encoding="utf-8")
    async with open_session(
        gguf, tmp_path / "loci.db", RunConfig(limits=Limits(max_turns=3)), files=[EXAMPLE]
    ) as session:
        whole = await session.agent.run(QUESTION)
    async with open_session(gguf, tmp_path / "long.db", RunConfig(limits=Limits(max_turns=3)), files=[long]) as session:
        navigated = await session.agent.run(QUESTION)
    assert whole.plan is not None and whole.plan.mode == "whole" and whole.plan.tools == []
    assert "35 euros" in whole.answer and whole.status == "done" and whole.evidence[0].start == 10
    assert navigated.plan is not None and navigated.plan.mode == "navigate"
    assert navigated.turns[0].action.tool == "context_search" and 2 <= len(navigated.turns) <= 3
    assert navigated.answer.strip()


async def test_the_bundled_model_is_steered_to_answer_after_repeating_a_call(tmp_path: Path, gguf: Model) -> None:
    same = '{"state": "listing", "tool": "context_list", "arguments": {"limit": 1000}}'
    model = FirstReplies(gguf, [same, same, same], structured=True)
    config = RunConfig(limits=Limits(max_turns=8), tools=("context",))
    async with open_session(model, tmp_path / "loci.db", config, files=[EXAMPLE]) as session:
        result = await session.agent.run(QUESTION)
    first = result.turns[0].observation_id
    assert [t.repeated for t in result.turns[:3]] == [None, first, first]
    assert len(result.turns) == 4 and result.turns[3].action.is_answer  # two repeats: the next turn only answers
    assert "35 euros" in result.answer and result.status == "done"


async def test_the_bundled_model_rewrites_an_empty_answer(tmp_path: Path, gguf: Model) -> None:
    model = FirstReplies(gguf, [""], structured=False)
    async with open_session(model, tmp_path / "loci.db", files=[EXAMPLE]) as session:
        result = await session.agent.run(QUESTION)
    assert len(model.requests) == 2 and "the answer is empty" in model.requests[1].messages[1]["content"]
    assert result.turns[0].retries == 1
    assert "35 euros" in result.answer and result.status == "done"
