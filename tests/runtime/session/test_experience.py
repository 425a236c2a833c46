"""Memory in the loop: the brief before a run, the episode after it, and the worker beside the turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.evolution.params import EvolutionParams
from loci.memory.graph.graph import Graph
from loci.memory.jobs.queue import Job
from loci.memory.jobs.worker import Worker
from loci.memory.records.runs import RunRecord, Runs
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.session.session import open_session


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"state": "looking", "tool": name, "arguments": arguments}


def answer(text: str, state: str = "done") -> dict[str, Any]:
    return {"state": state, "answer": text, "evidence": []}


async def test_a_run_sees_recalled_facts_and_leaves_an_episode_of_what_it_used(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    async with await Store.open(db) as store:
        fact, _ = await Graph(store).remember("the staging deploy key rotates every friday")
    model = ScriptedModel(
        [tool("memory_get", id=f"mem:{fact.id}"), answer("friday", state=f"used mem:{fact.id} for the day")]
    )
    async with open_session(model, db) as session:
        run_id, result = await session.run("when does the staging deploy key rotate")
    assert result.answer == "friday"
    model.check_used()
    first_prompt = json.dumps(model.calls[0].messages)
    assert f"mem:{fact.id}: the staging deploy key rotates every friday" in first_prompt
    async with await Store.open(db) as store:
        evolution = Evolution(Graph(store))
        episode = await evolution.episodes.get(f"run:{run_id}", bare="run")
        node = await evolution.graph.get(episode["node"])
        assert episode["outcome"] is None and node.status == "unknown"
        assert node.meta["task"] == "when does the staging deploy key rotate"
        [step] = node.meta["steps"]
        assert step["tool"] == "memory_get" and step["used"] == [fact.id] and step["recalled"] == [fact.id]
        assert {e.dst for e in await evolution.graph.edges(node.id) if e.kind == "ground"} == {fact.id}
        await evolution.episodes.feedback(run_id, "good")
        await Worker(evolution.jobs, evolution.handlers()).drain()
        assert (await evolution.graph.get(fact.id)).successes == 1


async def test_an_episode_step_is_shown_the_ids_the_memory_tool_before_it_returned(tmp_path: Path) -> None:
    """The second step was shown what the first step's memory tool returned; a tool that failed is not ok."""
    db = tmp_path / "loci.db"
    async with await Store.open(db) as store:
        fact, _ = await Graph(store).remember("the backup job writes to the north bucket")
    model = ScriptedModel(
        [
            tool("memory_get", id=f"mem:{fact.id}"),
            tool("memory_get", id="mem:999999"),
            answer("the north bucket", state=f"used mem:{fact.id}"),
        ]
    )
    async with open_session(model, db) as session:
        run_id, _ = await session.run("where does the backup job write")
    model.check_used()
    async with await Store.open(db) as store:
        record = await Runs(store).get(run_id)
        assert record.turns[0]["refs"] == [fact.id] and record.turns[1]["error"] is True
        evolution = Evolution(Graph(store))
        episode = await evolution.episodes.get(f"run:{run_id}", bare="run")
        first, second = (await evolution.graph.get(episode["node"])).meta["steps"]
    assert first["ok"] is True and second["ok"] is False
    assert second["recalled"] == [fact.id]


async def test_no_episode_leaves_the_graph_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    model = ScriptedModel([answer("hello")])
    async with open_session(model, db, episodes=False) as session:
        run_id, _ = await session.run("say hello")
    async with await Store.open(db) as store:
        stats = await Graph(store).stats()
        jobs = await Evolution(Graph(store)).jobs.counts()
        run = await Runs(store).get(run_id)
    assert stats["nodes"] == 0 and sum(jobs.values()) == 0
    assert (run.task, run.status, run.answer) == ("say hello", "done", "hello")  # the run is recorded all the same


@pytest.mark.parametrize("awaited", [False, True])
async def test_the_evaluator_given_to_a_session_scores_each_episode(tmp_path: Path, awaited: bool) -> None:
    db = tmp_path / "loci.db"
    seen: list[RunRecord] = []

    def score(record: RunRecord) -> float:
        seen.append(record)
        return 1.0 if record.answer == "hello" else 0.0

    async def score_later(record: RunRecord) -> float:
        return score(record)

    model = ScriptedModel([answer("hello"), answer("goodbye")])
    async with open_session(model, db, evaluator=score_later if awaited else score) as session:
        first, _ = await session.run("say hello")
        second, _ = await session.run("say hello again")
    async with await Store.open(db) as store:
        episodes = Evolution(Graph(store)).episodes
        outcomes = [(await episodes.get(f"run:{i}", bare="run"))["outcome"] for i in (first, second)]
    assert [record.id for record in seen] == [first, second]
    assert outcomes == [1.0, 0.0]


async def test_a_turn_completes_while_a_long_refinement_job_runs(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    entered, release, finished = anyio.Event(), anyio.Event(), anyio.Event()

    async def slow_model(prompt: str) -> str:
        entered.set()
        await release.wait()
        return "Use it to deploy a service."

    async with await Store.open(db) as store:
        evolution = Evolution(Graph(store), EvolutionParams(distill_n=2), language=slow_model)
        a, _ = await evolution.graph.remember("deploy uses make release")
        for task in ("deploy the web app", "deploy the api app"):
            steps = [Step("memory_recall", {"query": "deploy"}, used=(a.id,)), Step("read", {"id": "x"})]
            await evolution.episodes.write(Episode(task, steps, outcome=1.0))
        await Worker(evolution.jobs, {"refine": evolution.refine_job}).drain()  # distils, queues a describe job

        async def describe(job: Job) -> object:
            done = await evolution.describe_job(job)
            finished.set()
            return done

        model = ScriptedModel([answer("done")])
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(Worker(evolution.jobs, {"describe": describe}).drain)
                await entered.wait()  # the job is in its long model call
                async with open_session(model, db) as session:
                    _, result = await session.run("deploy the docs app")
                assert result.answer == "done" and not finished.is_set()
                release.set()
                await finished.wait()
        [procedure] = await evolution.procedures("deploy")
    assert procedure["text"].startswith("Use it to deploy a service. Steps:")
