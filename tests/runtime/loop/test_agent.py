"""The turn loop's logic, driven by the scripted model over real MCP and SQLite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import ModelBehaviorError, UsageError
from loci.memory.records.runs import Runs
from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.prompt.build import RegionSizes
from loci.runtime.session.session import open_session

DOC = "\n".join(f"line {i}: nothing to see" for i in range(1, 40)) + "\nline 40: the plot fee is 35 euros\n"


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "garden.txt"
    path.write_text(DOC, encoding="utf-8")
    return path


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"state": f"calling {name}", "tool": name, "arguments": arguments}


def answer(text: str, evidence: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"state": "done", "answer": text, "evidence": evidence or []}


async def test_tool_call_goes_through_mcp_and_answer_carries_evidence(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel(
        [tool("context_search", query="fee"), answer("35 euros", [{"id": "doc:1", "start": 40, "end": 40}])]
    )
    async with open_session(model, tmp_path / "loci.db", files=[doc]) as session:
        result = await session.agent.run("What is the fee?")
    model.check_used()
    assert result.status == "done"
    assert result.answer == "35 euros"
    assert result.tool_calls == 1
    assert "35 euros" in result.evidence[0].text
    second_prompt = model.calls[1].messages[1]["content"]
    assert "Result of context_search" in second_prompt and "35 euros" in second_prompt


async def test_invalid_json_is_answered_with_the_error_and_retried(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel(["{not json", tool("context_list"), answer("ok")])
    async with open_session(model, tmp_path / "loci.db", files=[doc]) as session:
        result = await session.agent.run("task")
    assert result.turns[0].retries == 1
    assert "not valid JSON" in model.calls[1].messages[1]["content"]


async def test_unknown_tool_is_named_in_the_error_the_model_reads(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel([tool("context_delete_everything"), tool("context_list"), answer("ok")])
    async with open_session(model, tmp_path / "loci.db", files=[doc]) as session:
        await session.agent.run("task")
    retry_prompt = model.calls[1].messages[1]["content"]
    assert "unknown tool 'context_delete_everything'" in retry_prompt
    assert "context_read" in retry_prompt


async def test_wrong_arguments_are_rejected_before_dispatch(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel([tool("context_read", start="one"), tool("context_read", id="doc:1"), answer("ok")])
    async with open_session(model, tmp_path / "loci.db", files=[doc]) as session:
        result = await session.agent.run("task")
    assert "wrong arguments for context_read" in model.calls[1].messages[1]["content"]
    assert result.turns[0].action.arguments == {"id": "doc:1"}


async def test_retries_are_bounded_then_the_run_fails_clearly(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel(["nope", "still nope", "never"])
    async with open_session(
        model, tmp_path / "loci.db", RunConfig(limits=Limits(max_retries=2)), files=[doc]
    ) as session:
        with pytest.raises(ModelBehaviorError, match="invalid 3 times"):
            await session.agent.run("task")


async def test_last_turn_allows_only_an_answer(tmp_path: Path, doc: Path) -> None:
    def policy(request: Request) -> dict[str, Any] | str:
        return tool("context_list") if request.schema is not None else "the plot fee is 35 euros"

    model = ScriptedModel([policy] * 3)
    async with open_session(model, tmp_path / "loci.db", RunConfig(limits=Limits(max_turns=3)), files=[doc]) as session:
        result = await session.agent.run("task")
    assert [t.action.is_answer for t in result.turns] == [False, False, True]
    assert result.answer == "the plot fee is 35 euros" and result.status == "done"
    assert [(c.start, c.end) for c in result.evidence] == [(40, 40)]  # found for the free-text answer
    assert "Write the answer to the task now" in model.calls[2].messages[1]["content"]


async def test_first_turn_must_look_when_documents_do_not_fit(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel([answer("guess"), tool("context_list"), answer("ok")])
    doc.write_text(DOC * 12, encoding="utf-8")  # more than the whole 2,048-token window
    config = RunConfig(sizes=RegionSizes.for_window(2_048, task=40, window=100))
    async with open_session(model, tmp_path / "loci.db", config, files=[doc]) as session:
        result = await session.agent.run("task")
    assert "answer" not in json.dumps(model.calls[0].schema)
    assert "look at the material" in model.calls[1].messages[1]["content"]
    assert result.answer == "ok"


async def test_evidence_that_does_not_exist_is_rejected(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel(
        [
            tool("context_list"),
            answer("35 euros", [{"id": "doc:99"}]),
            answer("35 euros", [{"id": "doc:1", "start": 1, "end": 500}]),
            answer("35 euros", [{"id": "doc:1", "start": 40, "end": 40}]),
        ]
    )
    async with open_session(model, tmp_path / "loci.db", files=[doc]) as session:
        result = await session.agent.run("task")
    assert "doc:99" in model.calls[2].messages[1]["content"]
    assert "has lines 1-40" in model.calls[3].messages[1]["content"]
    assert result.status == "done" and result.evidence[0].start == 40


async def test_huge_observation_is_stored_whole_and_shown_as_head_and_pointer(tmp_path: Path, doc: Path) -> None:
    big = MCPServer(name="big")

    @big.tool()
    def dump() -> str:
        """Return a lot of text."""
        return " ".join(f"word{i}" for i in range(50_000))

    sizes = RegionSizes.for_window(4_096)
    model = ScriptedModel([tool("dump"), answer("seen")])
    async with open_session(model, tmp_path / "loci.db", RunConfig(sizes=sizes), files=[doc]) as session:
        await session.host.add("big", big)
        result = await session.agent.run("task")
        stored = await session.contexts.get(result.turns[0].observation_id)
    second = model.calls[1]
    shown = second.messages[1]["content"]
    assert stored.tokens >= 50_000  # chunk boundaries may split a word
    assert f'context_read(id="{stored.id}"' in shown
    assert "word49999" not in shown
    assert sum(model.count_tokens(m["content"]) for m in second.messages) <= sizes.total - sizes.reply


async def test_token_budget_ends_the_run_with_a_partial_answer(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel([tool("context_list"), tool("context_read", id="doc:1")], repeat_last=True)
    async with open_session(
        model, tmp_path / "loci.db", RunConfig(limits=Limits(max_tokens=1_000, max_turns=50)), files=[doc]
    ) as session:
        result = await session.agent.run("task")
    assert result.status == "partial"
    assert "token budget of 1000" in (result.reason or "")
    assert result.answer.startswith("calling context_")  # the last working state
    assert 2 <= len(result.turns) == len(model.calls) < 50


def test_zero_turns_is_refused() -> None:
    with pytest.raises(UsageError, match="at least 1"):
        Limits(max_turns=0)


async def test_turns_and_observations_stay_in_the_store(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel([tool("context_search", query="fee"), answer("ok")])
    async with open_session(model, tmp_path / "loci.db", files=[doc]) as session:
        await session.agent.run("task")
    async with await Store.open(tmp_path / "loci.db") as store:
        kinds = [
            row[0]
            for row in store.read_sync(lambda db: db.execute("SELECT kind FROM context_objects ORDER BY id").fetchall())
        ]
    assert kinds == ["doc", "obs", "turn"]


async def test_tool_choice_forces_the_tool_of_each_early_turn(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel(
        [tool("context_search", query="fee"), tool("context_read", id="doc:1", start=40, end=40), answer("35")]
    )
    async with open_session(model, tmp_path / "loci.db", files=[doc]) as session:
        result = await session.agent.run("task", tool_choice=["context_search", "context_read"])
        with pytest.raises(UsageError, match="unknown tools: nope"):
            await session.agent.run("task", tool_choice=["nope"])
    first, second = (json.dumps(call.schema) for call in model.calls[:2])
    assert '"const": "context_search"' in first and "context_read" not in first and "answer" not in first
    assert '"const": "context_read"' in second and "context_search" not in second
    assert "Call context_search now." in model.calls[0].messages[1]["content"]
    assert [t.action.tool for t in result.turns[:2]] == ["context_search", "context_read"]


async def test_the_agent_remembers_and_recalls_through_the_memory_server(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel(
        [
            tool("memory_remember", text="the plot fee is 35 euros a season", kind="semantic"),
            tool("memory_recall", query="plot fee", k=3),
            answer("35"),
        ]
    )
    async with open_session(model, tmp_path / "loci.db", files=[doc]) as session:
        result = await session.agent.run("remember the fee")
    recalled = model.calls[2].messages[1]["content"]
    assert [t.action.tool for t in result.turns[:2]] == ["memory_remember", "memory_recall"]
    assert "Result of memory_recall" in recalled and "35 euros a season" in recalled


async def test_session_run_records_the_run_and_its_trace(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel(
        [tool("context_search", query="fee"), answer("35 euros", [{"id": "doc:1", "start": 40, "end": 40}])]
    )
    async with open_session(model, tmp_path / "loci.db", files=[doc]) as session:
        run_id, result = await session.run("What is the fee?")
        record = await Runs(session.store).get(run_id)
    model.check_used()
    assert (record.status, record.answer) == ("done", result.answer)
    assert record.evidence == [{"id": "doc:1", "start": 40, "end": 40}]
    assert [t.get("tool") for t in record.turns] == ["context_search", None]
    assert record.turns[0]["arguments"] == {"query": "fee"}


async def test_session_run_records_a_failure_and_a_cancellation(tmp_path: Path, doc: Path) -> None:
    model = ScriptedModel(["{bad", "{bad", "{bad"])
    async with open_session(model, tmp_path / "loci.db", files=[doc]) as session:
        with pytest.raises(ModelBehaviorError):
            await session.run("task")
        started = anyio.Event()

        async def hang(request: Request) -> str:
            started.set()
            await anyio.sleep_forever()
            return ""

        session.agent.model.generate = hang
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(session.run, "task two")
                await started.wait()
                group.cancel_scope.cancel()
        records = await Runs(session.store).list()
    assert [(r.task, r.status) for r in records] == [("task two", "cancelled"), ("task", "failed")]
    assert "ModelBehaviorError" in (records[1].reason or "")
