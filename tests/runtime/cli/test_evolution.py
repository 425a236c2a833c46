"""`loci feedback` and `loci memory refine|consolidate|history|procedures`, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.memory.engines.select import use_engine
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph
from tests.runtime.cli_helpers import loci, script


def run_json(*args: str, home: Path, timeout: float = 300) -> dict:
    done = loci(*args, "--json", home=home, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_feedback_on_a_run_then_refine_counts_its_outcome_once(tmp_path: Path) -> None:
    fact = run_json("memory", "add", "the harbor fee is 35 euros", home=tmp_path)["id"]
    replies = [
        {"state": "s", "tool": "memory_get", "arguments": {"id": fact}},
        {"state": f"used {fact}", "answer": "35 euros", "evidence": []},
    ]
    out = run_json("run", "what is the harbor fee", "--model", script(tmp_path, replies), home=tmp_path)
    run_id = out["run_id"]
    assert isinstance(run_id, int)
    queued = run_json("memory", "refine", home=tmp_path)
    assert queued["ran"]["done"] == 1  # the run's own job: formation is done, the outcome is unknown
    assert run_json("feedback", str(run_id), "good", "right fee", home=tmp_path)["counted"]
    assert not run_json("feedback", f"run:{run_id}", "good", "right fee", home=tmp_path)["counted"]
    refined = run_json("memory", "refine", home=tmp_path)
    assert refined["ran"]["done"] == 1 and refined["queue"]["queued"] == 0
    shown = run_json("memory", "show", fact, home=tmp_path)
    assert shown["successes"] == 1
    history = run_json("memory", "history", fact, home=tmp_path)
    assert [e["op"] for e in history["events"]][0] == "add"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["feedback", "77", "good"], "run 77: no such run"),
        (["feedback", "1", "1.5"], "outside [0, 1]"),
        (["feedback", "1", "so-so"], "not good, bad or a number"),
        (["memory", "history", "edge:x"], "not an edge id"),
        (["memory", "history", "mem:404"], "no memory mem:404"),
    ],
)
def test_bad_evolution_input_is_a_clear_usage_error(tmp_path: Path, args: list[str], message: str) -> None:
    done = loci(*args, home=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr


async def test_feedback_refine_consolidate_and_procedures_run_alike_on_either_engine(home: str, tmp_path: Path) -> None:
    async with use_engine(home) as store:
        evolution = Evolution(Graph(store))
        fact, _ = await evolution.graph.remember("the harbor fee is 35 euros")
        steps = [Step("memory_recall", {"query": "fee"}, used=(fact.id,)), Step("memory_get", {"id": fact.ref})]
        episode = await evolution.episodes.write(Episode("what is the harbor fee", steps, run_id=7))
    at = ("--db", home)
    assert run_json("memory", "refine", *at, home=tmp_path)["ran"]["done"] == 1  # formation's job: no outcome yet
    assert run_json("feedback", "7", "good", "right fee", *at, home=tmp_path)["episode"] == f"mem:{episode}"
    assert run_json("memory", "refine", *at, home=tmp_path)["queue"]["done"] == 2
    assert run_json("memory", "show", fact.ref, *at, home=tmp_path)["successes"] == 1
    assert run_json("memory", "consolidate", *at, home=tmp_path)["changes"] == 0
    assert run_json("memory", "procedures", *at, home=tmp_path) == []  # one success distils nothing yet
    history = run_json("memory", "history", fact.ref, *at, home=tmp_path)
    assert [e["op"] for e in history["events"]] == ["add", "outcome"]


def test_consolidate_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    first = run_json("memory", "consolidate", home=tmp_path)
    dry = run_json("memory", "consolidate", "--dry-run", home=tmp_path)
    assert first["changes"] == 0 and dry["dry_run"] and dry["changes"] == 0


@pytest.mark.model
@pytest.mark.timeout(3000)  # three real runs; a loaded 2-core machine takes minutes for each
def test_runs_on_the_bundled_model_leave_episodes_whose_feedback_distils_a_procedure(tmp_path: Path) -> None:
    run_json("memory", "add", "the harbor fee is 35 euros a night", home=tmp_path)
    # A file keeps --tools memory pinned: a run with no file reads a fresh memory document of its own instead
    # (runtime/session/sources.py, runtime/cli/run.py `tools_for`), and the small model's recall arguments
    # drifted from run to run, so the three runs did not share one recipe.
    harbor = tmp_path / "harbor.md"
    harbor.write_text("# Harbor\nThe harbor fee is 35 euros a night.\n", encoding="utf-8")
    runs = []
    for _ in range(3):  # the same recipe three times: memory_recall, memory_stats, then the answer (a one-step
        # sequence is never distilled: `distill_min_steps`)
        out = run_json(
            "run",
            "What is the harbor fee?",
            "--file",
            str(harbor),
            "--tools",
            "memory",
            "--tool-choice",
            "memory_recall,memory_stats",
            "--max-turns",
            "3",
            home=tmp_path,
            timeout=900,
        )
        runs.append(out["run_id"])
    for run_id in runs:
        assert run_json("feedback", str(run_id), "good", home=tmp_path)["counted"]
    before = run_json("memory", "stats", home=tmp_path)
    refined = run_json("memory", "refine", home=tmp_path)
    after = run_json("memory", "stats", home=tmp_path)
    assert refined["ran"]["done"] == 6 and refined["ran"]["failed"] == 0
    assert after["nodes_by_kind"]["procedural"] == before["nodes_by_kind"]["procedural"] + 1
    [procedure] = run_json("memory", "procedures", "harbor fee", home=tmp_path)
    assert procedure["steps"][0].startswith("memory_recall(")
    history = run_json("memory", "history", procedure["id"], home=tmp_path)
    assert sorted(source["run_id"] for source in history["sources"]) == runs
