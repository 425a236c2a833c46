"""Recursion through `context_ask`: depth, turn and token limits, leaves, map-then-reduce.

One scripted policy plays every level: it tells the levels apart by what the
runtime shows it (a leaf request's purpose, a child's task naming its span).
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from loci.memory.context.objects import Target
from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import ToolError
from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.loop.recursion import Recursion
from loci.runtime.models.base import Reply, Request
from loci.runtime.models.ledger import Ledger
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.models.wrapper import ModelWrapper
from loci.runtime.session.session import open_session

DOC = "".join(f"line {i}: nothing to see here\n" for i in range(1, 40)) + "line 40: the plot fee is 35 euros\n"
OTHER = "an unrelated file\n"
WAIT_S = 60.0


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    garden, other = tmp_path / "garden.txt", tmp_path / "other.txt"
    garden.write_text(DOC, encoding="utf-8")
    other.write_text(OTHER, encoding="utf-8")
    return [garden, other]


def prompt_of(request: Request) -> str:
    return request.messages[-1]["content"]


def depth_of(request: Request) -> int:
    """The level a request comes from: leaves say so; a child's task names its span."""
    if request.purpose in ("leaf", "reduce"):
        return 2
    return 1 if "Answer from doc:1:1-20 only" in prompt_of(request) else 0


def ask_result(request: Request) -> dict[str, Any]:
    """The child's result, as the parent reads it in its observation."""
    text = prompt_of(request).split("Result of context_ask", 1)[1].split("tokens):\n", 1)[1]
    result, _ = json.JSONDecoder().raw_decode(text)
    return dict(result)


def tool(name: str, state: str, **arguments: Any) -> dict[str, Any]:
    return {"state": state, "tool": name, "arguments": arguments}


def answer(text: str, start: int, end: int) -> dict[str, Any]:
    return {"state": "done", "answer": text, "evidence": [{"id": "doc:1", "start": start, "end": end}]}


def policy(request: Request) -> str | dict[str, Any]:
    """Depth 0 asks about lines 1-20, depth 1 about 5-10, the leaf answers."""
    if request.purpose == "leaf":
        return "line 7: nothing to see"
    asked = "Result of context_ask" in prompt_of(request)
    if depth_of(request) == 1:
        return (
            answer("nothing on lines 5-10", 5, 10)
            if asked
            else tool("context_ask", "asking 5-10", question="anything?", target="doc:1:5-10")
        )
    return (
        answer("nothing in lines 1-20", 1, 20)
        if asked
        else tool("context_ask", "asked doc:1 lines 1-20", question="anything?", target="doc:1:1-20")
    )


def scripted() -> ScriptedModel:
    return ScriptedModel([policy], repeat_last=True)


class Metered(ModelWrapper):
    """A scripted model whose every call costs a fixed number of tokens."""

    def __init__(self, model: ScriptedModel, cost: int) -> None:
        super().__init__(model)
        self.cost = cost

    async def generate(self, request: Request) -> Reply:
        reply = await self.inner.generate(request)
        return Reply(text=reply.text, prompt_tokens=self.cost, completion_tokens=0)


async def loaded(store: Store, model: ScriptedModel, text: str = DOC) -> ContextStore:
    contexts = ContextStore(store, model.count_tokens)
    await contexts.add_text("doc", "garden.txt", text)
    return contexts


async def test_recursion_goes_two_levels_and_ends_in_one_leaf_call(tmp_path: Path, files: list[Path]) -> None:
    model = scripted()
    with anyio.fail_after(WAIT_S):
        async with open_session(model, tmp_path / "loci.db", files=files) as session:
            result = await session.agent.run("Is there anything in the first lines?")
    assert result.status == "done" and result.answer == "nothing in lines 1-20"
    assert [(c.purpose, depth_of(c)) for c in model.calls] == [
        ("act", 0),
        ("act", 1),
        ("leaf", 2),
        ("act", 1),
        ("act", 0),
    ]
    leaf = model.calls[2]
    assert leaf.schema is None and "lines 5-10" in prompt_of(leaf) and "line 11:" not in prompt_of(leaf)
    child_prompt = prompt_of(model.calls[1])
    assert "doc:1 garden.txt" in child_prompt and "doc:2" not in child_prompt  # the child sees only its target
    assert "doc:2" in prompt_of(model.calls[0])
    child = ask_result(model.calls[4])
    assert child["depth"] == 1 and child["status"] == "done" and child["turns"] == 2
    assert child["evidence"] == [{"id": "doc:1", "start": 5, "end": 10}]
    assert child["tokens"] > 0


async def test_at_max_depth_one_the_root_child_is_a_leaf(tmp_path: Path, files: list[Path]) -> None:
    model = scripted()
    with anyio.fail_after(WAIT_S):
        async with open_session(model, tmp_path / "loci.db", RunConfig(max_depth=1), files=files) as session:
            result = await session.agent.run("Is there anything in the first lines?")
    assert result.status == "done"
    assert [(c.purpose, depth_of(c)) for c in model.calls] == [("act", 0), ("leaf", 2), ("act", 0)]
    leaf = ask_result(model.calls[2])
    assert leaf["depth"] == 1 and leaf["turns"] == 1 and leaf["answer"] == "line 7: nothing to see"
    assert leaf["evidence"] == [{"id": "doc:1", "start": 1, "end": 20}]


async def test_no_child_runs_beyond_the_depth_limit(store: Store) -> None:
    model = ScriptedModel([])
    recursion = Recursion(model, await loaded(store, model), RunConfig(max_depth=2), depth=3)
    with pytest.raises(ToolError, match="depth limit is 2"):
        await recursion("q", Target.parse("doc:1:1-20"))
    assert model.calls == []


async def test_a_child_stops_at_its_turn_limit_with_an_answer(store: Store) -> None:
    def reader(request: Request) -> dict[str, Any] | str:
        if request.schema is None:  # the last turn asks for the answer as text
            return "nothing to see here"
        return tool("context_read", "reading", id="doc:1", start=1, end=20)

    model = ScriptedModel([reader], repeat_last=True)
    recursion = Recursion(model, await loaded(store, model), RunConfig(limits=Limits(max_turns=2)))
    with anyio.fail_after(WAIT_S):
        result = await recursion("anything?", Target.parse("doc:1:1-20"))
    assert result["turns"] == 2 and len(model.calls) == 2
    assert result["answer"] == "nothing to see here" and result["depth"] == 1
    assert result["status"] == "partial" and "no claim of its own" in result["reason"]  # nothing in it to check


async def test_token_budget_is_shared_and_the_root_returns_its_partial_answer(
    tmp_path: Path, files: list[Path]
) -> None:
    inner = scripted()
    model = Metered(inner, cost=100)
    with anyio.fail_after(WAIT_S):
        async with open_session(
            model, tmp_path / "loci.db", RunConfig(limits=Limits(max_tokens=150)), files=files
        ) as session:
            result = await session.agent.run("Is there anything in the first lines?")
            child_text = (await session.contexts.read(result.turns[0].observation_id or "")).text
    # root turn 1 (100) then the child's turn 1 (200 in all): the leaf never runs, the child and root stop
    assert [depth_of(c) for c in inner.calls] == [0, 1]
    assert result.status == "partial" and result.reason == "the token budget of 150 was used up"
    assert result.answer == "asked doc:1 lines 1-20"  # the working state: the best partial answer
    child = json.loads(child_text)
    assert child["status"] == "partial" and "token budget of 150" in child["reason"]
    assert child["answer"] == "asking 5-10" and child["tokens"] == 100 and child["turns"] == 1


async def test_a_leaf_over_a_span_too_large_maps_chunks_then_reduces(store: Store) -> None:
    def leaf(request: Request) -> str:
        if request.purpose == "reduce":
            return "the fee is 35 euros"
        header = re.search(r"lines (\d+)-(\d+)", prompt_of(request))
        assert header is not None
        return "35 euros" if "35 euros" in prompt_of(request) else f"nothing in {header.group(0)}"

    model = ScriptedModel([leaf], repeat_last=True)
    recursion = Recursion(model, await loaded(store, model), RunConfig(max_depth=2), depth=2, leaf_chunk_tokens=60)
    with anyio.fail_after(WAIT_S):
        result = await recursion("What is the fee?", Target.parse("doc:1"))
    leaves = [c for c in model.calls if c.purpose == "leaf"]
    assert len(leaves) > 1 and [c.purpose for c in model.calls] == ["leaf"] * len(leaves) + ["reduce"]
    ranges = [tuple(map(int, re.search(r"lines (\d+)-(\d+)", prompt_of(c)).groups())) for c in leaves]
    assert ranges[0][0] == 1 and ranges[-1][1] == 40
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ranges))  # contiguous, no overlap
    assert all(model.count_tokens(prompt_of(c).split("\n", 1)[1].rsplit("\n\nQuestion:", 1)[0]) <= 60 for c in leaves)
    last = ranges[-1]
    assert f"[lines {last[0]}-{last[1]}] 35 euros" in prompt_of(model.calls[-1])  # the reduce sees every chunk's answer
    assert result["answer"] == "the fee is 35 euros" and result["status"] == "done"
    assert result["evidence"] == [{"id": "doc:1", "start": 1, "end": 40}]
    assert result["turns"] == len(leaves) + 1 and result["depth"] == 2


async def test_a_leaf_out_of_budget_returns_the_chunks_it_answered(store: Store) -> None:
    model = ScriptedModel(["nothing here"], repeat_last=True)
    contexts = await loaded(store, model)
    recursion = Recursion(model, contexts, RunConfig(max_depth=2), Ledger(max_tokens=1), depth=2, leaf_chunk_tokens=60)
    with anyio.fail_after(WAIT_S):
        result = await recursion("What is the fee?", Target.parse("doc:1"))
    assert len(model.calls) == 1 and result["status"] == "partial"
    assert result["reason"] == "the token budget of 1 was used up"
    [span] = result["evidence"]
    assert span["start"] == 1 and span["end"] < 40 and result["answer"].endswith("nothing here")


async def test_a_line_longer_than_a_chunk_is_cut_by_tokens_and_stays_in_the_span(store: Store) -> None:
    model = ScriptedModel(["ok"], repeat_last=True)
    long_line = " ".join(f"w{i}" for i in range(300))
    contexts = await loaded(store, model, f"short\n{long_line}\nline three is outside\n")
    recursion = Recursion(model, contexts, RunConfig(max_depth=2), depth=2, leaf_chunk_tokens=60)
    with anyio.fail_after(WAIT_S):
        result = await recursion("q", Target.parse("doc:1:2-2"))
    leaves = [prompt_of(c) for c in model.calls if c.purpose == "leaf"]
    assert len(leaves) >= 5 and all("lines 2-2" in text for text in leaves)
    assert "w0 " in leaves[0] and "w299" in leaves[-1]
    assert not any("line three" in text for text in leaves)
    assert result["evidence"] == [{"id": "doc:1", "start": 2, "end": 2}] and result["status"] == "done"
