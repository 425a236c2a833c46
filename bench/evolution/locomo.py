"""`loci bench evolution --data FILE`: does recall improve with use on real conversations?

For each conversation of `--data` (LoCoMo JSON or BEAM chats, read by
bench/recall/data.py as `bench recall` reads them), its questions (those
without evidence left out) are split with `--seed` into a training half and a test half. Two arms
each import the same conversation into a fresh home, with the structure
`bench recall` builds (memory/graph/conversation.py):

- static: the test half is recalled on the imported graph;
- evolving: the training half is asked first. Each question is a run
  (memory/records/runs.py) whose one step is a recall showing the top `--shown`
  turns, ids recorded in the run's turns; a `GoldEvaluator` built from the
  training half's gold evidence alone judges it: the evidence turns shown
  are the ones used, the others shown are noise, and the outcome is a
  success when any evidence was shown. The run's episode
  (memory/evolution/episodes.py) is written with that verdict, the
  refinement jobs run, then one consolidation; then the test half is
  recalled, exactly as in the static arm.

Both arms recall test questions with `record=False`, so one test question
does not steer the next; training recalls record their use, as a run does.

Keys (flat): `static_recall_at_K` and `evolving_recall_at_K` for K in
1, 5, 10, 20; `gain_at_1`, `gain_at_5` and `gain_at_10`; `by_category` (the same per category,
the three gains included: a loss at @1 in one kind shows there);
`gain_at_10_unseen` over the test questions none of whose evidence turns was
evidence of a training question (`unseen_questions` says how many), so a
gain that only re-finds turns the training half named shows as such;
`test_questions`, `train_questions`, `refinement` (the changes refinement
made, summed), `consolidation`, and `failed` (the samples that could not be
read or measured, with the reason; the others are measured). With
`--diagnose`, `bound` holds how much this feedback could add at @10 and why
the evolving arm does not reach it (bench/evolution/bound.py).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loci.bench.evolution.bound import Bound, Trained
from loci.bench.recall.data import Failed, Question, Sample, load_data
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import LociError, UsageError
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.evolution.params import DEFAULT_PARAMS, EvolutionParams
from loci.memory.graph.conversation import remember_conversation
from loci.memory.graph.graph import Graph
from loci.memory.graph.ranking import Weights
from loci.memory.graph.recall import Recall
from loci.memory.jobs.worker import Worker
from loci.memory.records.runs import RunRecord, Runs
from loci.runtime.cli.doctor import cpu_name

__all__ = ["KS", "GoldEvaluator", "run_locomo", "split_questions"]

KS = (1, 5, 10, 20)


class GoldEvaluator:
    """Judges a training run from the gold evidence of the training questions only.

    A run's task is its question; its turns hold the ids each recall showed. The
    verdict: the outcome (1 when any evidence turn was shown, else 0) and the shown
    ids that are evidence (used). A question it was not given is refused."""

    def __init__(self, train: Sequence[Question], node_of: dict[str, int]) -> None:
        self._gold = {q.text: {node_of[d] for d in q.evidence if d in node_of} for q in train}

    def knows(self, question: str) -> bool:
        return question in self._gold

    def useful(self, record: RunRecord) -> tuple[int, ...]:
        if record.task not in self._gold:
            raise UsageError(f"the evaluator was not given the question {record.task[:60]!r}")
        shown = [i for turn in record.turns for i in turn.get("shown", [])]
        return tuple(i for i in dict.fromkeys(shown) if i in self._gold[record.task])

    def __call__(self, record: RunRecord) -> float:
        """The outcome of a run (the `runtime.session.experience.Evaluator` form)."""
        return 1.0 if self.useful(record) else 0.0


def split_questions(questions: list[Question], seed: int) -> tuple[list[Question], list[Question]]:
    """A seeded half of the questions to train on, the rest to test on."""
    order = list(range(len(questions)))
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return [questions[i] for i in sorted(order[:half])], [questions[i] for i in sorted(order[half:])]


async def run_locomo(
    args: argparse.Namespace,
    params: EvolutionParams = DEFAULT_PARAMS,
    weights: Weights | None = None,
    *,
    record: bool = True,
) -> dict[str, Any]:
    if args.shown < 1:
        raise UsageError(f"--shown is how many turns a training recall shows: 1 or more, not {args.shown}")
    samples, failed = load_data(args.data)
    bound = Bound() if getattr(args, "diagnose", False) else None
    rows: dict[str, list[tuple[Question, bool, list[float]]]] = {"static": [], "evolving": []}
    train_count, changes, consolidation = 0, {}, {}
    with tempfile.TemporaryDirectory(prefix="loci-evolution-data-") as tmp:
        for index, sample in enumerate(samples):
            train, test = split_questions(sample.questions, args.seed * 1_000_003 + index)
            trained = set().union(*(q.evidence for q in train)) if train else set()
            try:
                arms = {
                    arm: await _arm(
                        Path(tmp) / f"{arm}{index}.db",
                        sample,
                        train if arm == "evolving" else [],
                        test,
                        args,
                        params,
                        weights,
                        record,
                        bound,
                    )
                    for arm in ("static", "evolving")
                }
            except LociError as exc:
                failed.append(Failed(sample.name, str(exc)))
                continue
            train_count += len(train)
            for arm, found in arms.items():
                for question, shares in zip(test, found["shares"], strict=True):
                    rows[arm].append((question, not (question.evidence & trained), shares))
                for name, count in found["changes"].items():
                    changes[name] = changes.get(name, 0) + count
                for name, count in found["consolidation"].items():
                    if isinstance(count, int):
                        consolidation[name] = consolidation.get(name, 0) + count
    report = _report(rows, train_count, changes, consolidation, args)
    report["failed"] = [{"sample": f.name, "reason": f.reason} for f in failed]
    if bound is not None:
        report["bound"] = bound.report()
    return report


async def _arm(
    path: Path,
    sample: Sample,
    train: list[Question],
    test: list[Question],
    args: argparse.Namespace,
    params: EvolutionParams,
    weights: Weights | None,
    record: bool,
    bound: Bound | None = None,
) -> dict[str, Any]:
    async with await Store.open(path) as store:
        graph = Graph(store)
        turns = sample.conversation.turns
        ids = await remember_conversation(graph, turns, cause="bench:evolution")
        dia_of: dict[int, set[str]] = {}
        node_of: dict[str, int] = {}
        for turn, node_id in zip(turns, ids, strict=True):
            if node_id is not None:
                dia_of.setdefault(node_id, set()).add(turn.ref)
                node_of[turn.ref] = node_id
        recall = Recall(graph, weights)
        evolution = Evolution(graph, params)
        changes: dict[str, int] = {}
        consolidation: dict[str, Any] = {}
        runs: list[Trained] = []
        if train:
            evaluator = GoldEvaluator(train, node_of)
            changes = await _train(evolution, recall, evaluator, train, args.shown, record, runs)
            consolidation = await evolution.consolidate()
        if bound is not None and train:
            await bound.evolving(recall, sample, test, node_of, runs)
        elif bound is not None:
            await bound.static(recall, test, node_of)
        shares = []
        for question in test:
            found = await recall.recall(question.text, k=KS[-1], kinds=["semantic"], record=False)
            shares.append([len(hit_at(found, dia_of, k) & question.evidence) / len(question.evidence) for k in KS])
        return {"shares": shares, "changes": changes, "consolidation": consolidation}


def hit_at(found: list, dia_of: dict[int, set[str]], k: int) -> set[str]:
    return set().union(*(dia_of.get(r.node.id, set()) for r in found[:k])) if found else set()


async def _train(
    evolution: Evolution,
    recall: Recall,
    evaluator: GoldEvaluator,
    train: list[Question],
    shown: int,
    record: bool,
    runs_done: list[Trained],
) -> dict[str, int]:
    """Ask each training question as a run, judge it, write its episode (added to `runs_done`); then run the
    refinement jobs."""
    runs = Runs(evolution.graph.store)
    worker = Worker(evolution.jobs, evolution.handlers())
    changes: dict[str, int] = {}
    for question in train:
        run_id = await runs.start(question.text, source="bench")
        found = await recall.recall(question.text, k=shown, kinds=["semantic"], record=record)
        ids = [r.node.id for r in found]
        turn = {"tool": "memory_recall", "arguments": {"query": question.text}, "shown": ids}
        await runs.finish(run_id, status="done", turns=[turn])
        run = await runs.get(run_id)
        step = Step("memory_recall", {"query": question.text}, recalled=tuple(ids), used=evaluator.useful(run))
        episode = Episode(question.text, [step], outcome=evaluator(run), run_id=run_id)
        node_id = await evolution.episodes.write(episode, cause=f"run:{run_id}")
        runs_done.append(Trained(question, node_id, step.used))
    await worker.drain()
    done = await evolution.graph.store.read(
        lambda db: [r[0] for r in db.conn.execute("SELECT result FROM jobs WHERE status = 'done'")]
    )
    for result in done:
        for name, count in (json.loads(result or "{}").get("changes") or {}).items():
            changes[name] = changes.get(name, 0) + count
    return changes


def _means(rows: list[tuple[Question, bool, list[float]]]) -> list[float]:
    return [round(statistics.fmean(r[2][i] for r in rows), 4) if rows else 0.0 for i in range(len(KS))]


def _report(
    rows: dict[str, list[tuple[Question, bool, list[float]]]],
    train_count: int,
    changes: dict[str, int],
    consolidation: dict[str, int],
    args: argparse.Namespace,
) -> dict[str, Any]:
    five, ten = KS.index(5), KS.index(10)
    static, evolving = _means(rows["static"]), _means(rows["evolving"])
    result: dict[str, Any] = {"data": str(args.data), "seed": args.seed, "shown": args.shown}
    result["train_questions"] = train_count
    result["test_questions"] = len(rows["static"])
    for i, k in enumerate(KS):
        result[f"static_recall_at_{k}"] = static[i]
        result[f"evolving_recall_at_{k}"] = evolving[i]
    result["gain_at_1"] = round(evolving[0] - static[0], 4)
    result["gain_at_5"] = round(evolving[five] - static[five], 4)
    result["gain_at_10"] = round(evolving[ten] - static[ten], 4)
    unseen = {arm: [r for r in found if r[1]] for arm, found in rows.items()}
    result["unseen_questions"] = len(unseen["static"])
    result["gain_at_10_unseen"] = round(_means(unseen["evolving"])[ten] - _means(unseen["static"])[ten], 4)
    categories = sorted({r[0].category for r in rows["static"]})
    result["by_category"] = {}
    for category in categories:
        s = _means([r for r in rows["static"] if r[0].category == category])
        e = _means([r for r in rows["evolving"] if r[0].category == category])
        result["by_category"][category] = {
            "questions": sum(1 for r in rows["static"] if r[0].category == category),
            **{f"static_recall_at_{k}": s[i] for i, k in enumerate(KS)},
            **{f"evolving_recall_at_{k}": e[i] for i, k in enumerate(KS)},
            "gain_at_1": round(e[0] - s[0], 4),
            "gain_at_5": round(e[five] - s[five], 4),
            "gain_at_10": round(e[ten] - s[ten], 4),
        }
    result["refinement"] = changes
    result["consolidation"] = consolidation
    result["goals"] = {"gain_at_10": 0.03, "gain_at_1": 0.0}
    result["cpu"] = cpu_name()
    return result
