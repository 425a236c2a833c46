"""`loci bench evolution --data`: learning measured on conversations, with an evaluator blind to the test half."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from loci.bench import load
from loci.bench.evolution.locomo import KS, GoldEvaluator, split_questions
from loci.bench.recall.data import load_data
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.conversation import remember_conversation
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall
from loci.memory.jobs.worker import Worker
from loci.memory.records.runs import Runs

DATA = Path(__file__).parents[2] / "bench" / "data" / "recall_generated.json"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    load("evolution").add_arguments(parser)
    return parser.parse_args(list(argv))


async def test_bench_evolution_on_conversations_reports_both_arms_and_the_gains_per_category() -> None:
    result = await load("evolution").run(_args("--data", str(DATA), "--seed", "3"))
    for k in KS:
        assert 0.0 <= result[f"static_recall_at_{k}"] <= 1.0
        assert 0.0 <= result[f"evolving_recall_at_{k}"] <= 1.0
    assert result["gain_at_10"] == pytest.approx(
        result["evolving_recall_at_10"] - result["static_recall_at_10"], abs=1e-3
    )
    assert 0 <= result["unseen_questions"] <= result["test_questions"]
    assert result["train_questions"] + result["test_questions"] == sum(len(s.questions) for s in load_data(DATA)[0])
    assert result["by_category"] and "gain_at_10_unseen" in result
    for cell in result["by_category"].values():
        for k in (1, 5, 10):
            gain = cell[f"evolving_recall_at_{k}"] - cell[f"static_recall_at_{k}"]
            assert cell[f"gain_at_{k}"] == pytest.approx(gain, abs=1e-3)
    assert result["refinement"].get("successes", 0) > 0  # the training half was judged and counted
    json.dumps(result)


async def test_a_missing_file_or_a_bad_shown_count_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no benchmark file"):
        await load("evolution").run(_args("--data", str(tmp_path / "absent.json")))
    with pytest.raises(UsageError, match="--shown"):
        await load("evolution").run(_args("--data", str(DATA), "--shown", "0"))


def test_the_split_is_seeded_and_the_evaluator_never_sees_the_test_half() -> None:
    sample = load_data(DATA)[0][0]
    turns = sample.conversation.turns
    questions = sample.questions
    train, test = split_questions(questions, 7)
    assert (train, test) == split_questions(questions, 7) and train and test
    assert not {q.text for q in train} & {q.text for q in test}
    evaluator = GoldEvaluator(train, {t.ref: i for i, t in enumerate(turns, 1)})
    assert all(evaluator.knows(q.text) for q in train)
    for question in test:
        assert not evaluator.knows(question.text)
        record = _record(question.text, [1, 2, 3])
        with pytest.raises(UsageError, match="not given the question"):
            evaluator(record)


def _record(task: str, shown: list[int]):
    from loci.memory.records.runs import RunRecord

    return RunRecord(1, task, "", "bench", "done", "", None, turns=[{"tool": "memory_recall", "shown": shown}])


async def test_feedback_on_a_training_question_changes_its_weights_once(tmp_path: Path) -> None:
    sample = load_data(DATA)[0][0]
    turns = sample.conversation.turns
    async with await Store.open(tmp_path / "conv.db") as store:
        graph = Graph(store)
        ids = await remember_conversation(graph, turns)
        node_of = {t.ref: i for t, i in zip(turns, ids, strict=True) if i is not None}
        questions = [q for q in sample.questions if q.evidence <= set(node_of)]
        evaluator = GoldEvaluator(questions, node_of)
        evolution = Evolution(graph)
        runs = Runs(store)
        for question in questions:  # the first question whose recall shows an evidence turn
            shown = [r.node.id for r in await Recall(graph).recall(question.text, k=10, kinds=["semantic"])]
            run_id = await runs.start(question.text)
            await runs.finish(run_id, status="done", turns=[{"tool": "memory_recall", "shown": shown}])
            record = await runs.get(run_id)
            if evaluator(record):
                break
        used = evaluator.useful(record)
        noise = [i for i in shown if i not in used]
        step = Step("memory_recall", {"query": question.text}, recalled=tuple(shown), used=used)
        episode = await evolution.episodes.write(Episode(question.text, [step], run_id=run_id))
        worker = Worker(evolution.jobs, evolution.handlers())
        await worker.drain()
        before = await _weights(store)
        first = await evolution.episodes.feedback(run_id, "good")
        await worker.drain()
        after = await _weights(store)
        assert first["counted"]
        for node_id in used:
            assert after["nodes"][node_id][0] == before["nodes"][node_id][0] + 1  # the evidence turns answered
        for node_id in noise:
            assert after["nodes"][node_id] == before["nodes"][node_id]  # noise is not counted as an answer
        grounds = {e.dst: e.weight for e in await graph.edges(episode) if e.kind == "ground"}
        assert set(grounds) == set(used) and all(w > 0 for w in grounds.values())
        again = await evolution.episodes.feedback(run_id, "good")
        await worker.drain()
        assert not again["counted"] and await _weights(store) == after


async def _weights(store: Store) -> dict:
    def read(db) -> dict:
        nodes = {r[0]: (r[1], r[2]) for r in db.conn.execute("SELECT id, successes, failures FROM memory_nodes")}
        edges = db.conn.execute("SELECT id, weight, co_success, co_failure, deleted IS NULL FROM memory_edges")
        return {"nodes": nodes, "edges": sorted(edges.fetchall())}

    return await store.read(read)


def _shared_evidence(path: Path) -> Path:
    """A conversation whose six questions share one evidence turn: three name its words, three ask about the
    speaker's children, whom twelve other turns name."""
    kinds = ("pancakes", "kites", "puppets", "cookies", "masks", "boats", "lanterns", "bracelets", "pizzas")
    kinds += ("paintings", "sandcastles", "birdhouses")
    turns = [{"speaker": "Melanie", "dia_id": "D1:1", "text": "We drove to the Grand Canyon and my son got hurt."}]
    turns += [
        {"speaker": ("Caroline", "Melanie")[i % 2], "dia_id": f"D1:{i + 2}", "text": f"The children loved the {k}."}
        for i, k in enumerate(kinds)
    ]
    questions = (
        "What happened to Melanie's son on the road trip?",
        "Where did Melanie drive, to the Grand Canyon?",
        "Who got hurt on the Grand Canyon trip?",
        "How many children does Melanie have?",
        "What did Melanie's children do this week?",
        "Do the children of Melanie like trips?",
    )
    conversation = {"speaker_a": "Melanie", "speaker_b": "Caroline", "session_1_date_time": "1:56 pm on 8 May, 2023"}
    sample = {"sample_id": "s", "conversation": conversation | {"session_1": turns}}
    sample["qa"] = [{"question": q, "answer": "-", "evidence": ["D1:1"], "category": 1} for q in questions]
    path.write_text(json.dumps([sample]))
    return path


async def test_diagnose_bounds_what_feedback_could_add_and_says_why_each_turn_was_missed(tmp_path: Path) -> None:
    data = _shared_evidence(tmp_path / "shared.json")
    result = await load("evolution").run(_args("--data", str(data), "--seed", "1", "--diagnose"))
    bound = result["bound"]
    assert bound["test_questions"] == result["test_questions"] == 3
    assert bound["static_at_10"] == pytest.approx(result["static_recall_at_10"], abs=1e-3)
    assert bound["evolving_at_10"] == pytest.approx(result["evolving_recall_at_10"], abs=1e-3)
    assert bound["evidence"] >= bound["a"] >= bound["ab"] >= bound["abc"] >= bound["abc_named"]
    # A children question misses the turn in its static ten; a training run on the same words used it.
    assert bound["ab"] == bound["abc"] == 1 and bound["static_at_10"] < 1.0
    assert bound["ceiling_ab_at_10"] == 1.0 >= bound["ceiling_abc_named_at_10"] >= bound["static_at_10"]
    assert bound["rise_ab"] == pytest.approx(bound["ceiling_ab_at_10"] - bound["static_at_10"], abs=1e-3)
    assert sum(bound["why"].values()) == bound["abc"]
    assert sum(bound["why_named"].values()) == bound["abc_named"]
    assert "bound" not in await load("evolution").run(_args("--data", str(data), "--seed", "1"))
