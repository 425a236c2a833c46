"""Every digest job runs on one session over the job's own store: a run record and an episode, one open.

Each strategy goes through `Session.run` (source "digest"), so it leaves its
run record and its episode like `loci run`; the home is opened once, by the
job when it is given a path, never when it is given an open store; the
`digest` and `run_task` MCP tools run on the served store.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from loci.memory.engines.sqlite.store import Store
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph
from loci.memory.records.runs import Runs
from loci.runtime.cli.serve import tool_sets
from loci.runtime.digest.run import digest
from loci.runtime.models.scripted import ScriptedModel
from loci.servers.app import build_app
from tests.runtime.digest_helpers import answer_from_memory, memory_step, write_doc

READ = {"state": "reading", "tool": "context_search", "arguments": {"query": "harbour gate"}}
DONE = {"state": "found", "answer": "7316", "evidence": [{"id": "doc:1", "start": 17, "end": 17}]}
STEPS = {
    "stream": [memory_step, answer_from_memory],  # a lookup: the chunk holding line 17, then the answer
    "navigate": [json.dumps(READ), json.dumps(DONE)],
    "direct": ["7316"],
}


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each home was opened in this process."""
    counts: Counter[str] = Counter()
    open_sync = Store.open_sync.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Store], path: Any, **options: Any) -> Store:
        counts[str(Path(path))] += 1
        return open_sync(cls, path, **options)

    monkeypatch.setattr(Store, "open_sync", classmethod(counting))
    return counts


async def run_and_episode(db: Path, run_id: int) -> tuple[Any, dict[str, Any]]:
    async with await Store.open(db) as store:
        run = await Runs(store).get(run_id)
        episode = await Evolution(Graph(store)).episodes.get(f"run:{run_id}", bare="run")
    return run, episode


@pytest.mark.parametrize("strategy", sorted(STEPS))
async def test_a_digest_of_each_strategy_leaves_a_run_record_and_an_episode(
    tmp_path: Path, strategy: str, opened: Counter[str]
) -> None:
    doc, db = write_doc(tmp_path / "log.txt"), tmp_path / "loci.db"
    model = ScriptedModel(STEPS[strategy])
    sizes = {"chunk_tokens": 64, "memory_tokens": 64}
    record = await digest([doc], "What is the gate code?", model=model, db=db, strategy=strategy, **sizes)
    assert opened[str(db)] == 1  # the job's store, and the session runs on it
    assert record["answer"] == "7316" and record["strategy"] == strategy
    run, episode = await run_and_episode(db, record["run_id"])
    assert (run.source, run.status, run.answer, run.task) == ("digest", "done", "7316", "What is the gate code?")
    assert {e["id"] for e in run.evidence} == {"doc:1"}
    assert episode["run_id"] == record["run_id"]
    assert len(run.turns) == (2 if strategy == "navigate" else 0)


async def test_a_digest_given_an_open_store_opens_none(tmp_path: Path, opened: Counter[str]) -> None:
    doc, db = write_doc(tmp_path / "log.txt"), tmp_path / "loci.db"
    async with await Store.open(db) as store:
        model = ScriptedModel(STEPS["navigate"])
        record = await digest([doc], "What is the gate code?", model=model, db=store, strategy="navigate")
        assert not store._closed  # the caller's store stays open
    assert opened[str(db)] == 1 and record["answer"] == "7316"


async def test_the_mcp_digest_and_run_task_run_on_the_served_store(tmp_path: Path, opened: Counter[str]) -> None:
    write_doc(tmp_path / "log.txt")
    script = tmp_path / "replies.json"
    task_answer = {"state": "done", "answer": "hello", "evidence": []}
    # Each tool loads its own model from the script: the digest's direct call and the task's one turn.
    script.write_text(json.dumps([json.dumps(task_answer)]), encoding="utf-8")
    db = tmp_path / "loci.db"
    app = build_app(
        db, ("run", "digest"), tool_sets=tool_sets(), roots=[tmp_path], options={"model": f"scripted:{script}"}
    )
    with anyio.fail_after(60):
        async with Client(app) as client:
            digested = await client.call_tool(
                "digest", {"paths": ["log.txt"], "question": "What is the gate code?", "strategy": "direct"}
            )
            ran = await client.call_tool("run_task", {"task": "say hello"})
    assert not digested.is_error and not ran.is_error, (digested.content, ran.content)
    assert opened[str(db)] == 1  # the server's lifespan opened it; neither tool opened it again
    digest_run, _ = await run_and_episode(db, digested.structured_content["run_id"])
    task_run, _ = await run_and_episode(db, int(ran.structured_content["run"].removeprefix("run:")))
    assert (digest_run.source, digest_run.answer) == ("digest", digested.structured_content["answer"])
    assert (task_run.source, task_run.answer) == ("mcp", "hello")
