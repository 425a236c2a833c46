"""`loci bench evolution --data FILE --diagnose`: how much feedback could teach recall, and why it does not.

The evolving arm learns from the training runs' episodes: an episode whose
question matches a test question spreads, along its `ground` links, to the
turns its run used. So the most that feedback of this kind can add to a test
question's recall@10 is its evidence turns that

(a) a training run showed and used (the evaluator marked them evidence),
(b) the static recall of the test question leaves out of its first ten, and
(c) belong to a training question that shares a searched word with the test
    question (the words recall searches, `searched_terms`, under the
    stem of `memory.text.stem`); `named` narrows (c) to a shared
    word that is not a speaker's name, since a name matches every question
    about that person.

`Bound` collects, per test question, its share of evidence with every
(a and b), (a, b and c) and (a, b, c beyond names) turn added to the static
first ten: three ceilings at @10, generous since a turn lifted in costs
another its place. For each (a, b, c) turn it also says what the evolving
arm did with it: `lifted` (in its first ten), `no_match` (no episode that used
it is among the question's direct matches), `not_spread` (one is, but not
among the ten best matches that spread, `Ranking.spread`), or `too_weak` (it
spreads, and the turn's score stays below the tenth's; `weak_graph_part` and
`weak_tenth_score` are their means); `why_named` counts the same for the
(a, b, c beyond names) turns. The ranks are read from a recall of any
kind, where episodes compete with turns as they do for the places that spread.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loci.bench.recall.data import Question, Sample
from loci.memory.graph.recall import Recall
from loci.memory.graph.terms import searched_terms
from loci.memory.text import stem

__all__ = ["Bound", "Trained"]

TOP = 10
# How deep the any-kind recall looks for an episode and a turn; beyond it a node is not a match worth naming.
DEPTH = 100


@dataclass(frozen=True)
class Trained:
    """One training run: its question, its episode's node and the turns it used."""

    question: Question
    episode: int
    used: tuple[int, ...]


def _words(text: str, names: frozenset[str] = frozenset()) -> set[str]:
    return {stem(t) for t in searched_terms(text)} - names


@dataclass
class Bound:
    """The ceilings and the reasons, summed over the samples of one run (the static arm of a sample first)."""

    shares: list[tuple[float, float, float, float, float]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    why: Counter[str] = field(default_factory=Counter)
    why_named: Counter[str] = field(default_factory=Counter)
    weak: list[tuple[float, float]] = field(default_factory=list)
    _static: list[set[int]] = field(default_factory=list)

    async def static(self, recall: Recall, test: Sequence[Question], node_of: dict[str, int]) -> None:
        """The static first ten of each test question, which the evolving arm of the same sample is read against."""
        self._static = [set(await _first(recall, q.text, ["semantic"], TOP)) for q in test]

    async def evolving(
        self, recall: Recall, sample: Sample, test: Sequence[Question], node_of: dict[str, int], runs: list[Trained]
    ) -> None:
        names = frozenset(stem(t.speaker) for t in sample.conversation.turns if t.speaker)
        by_turn: dict[int, list[Trained]] = {}
        for run in runs:
            for node_id in run.used:
                by_turn.setdefault(node_id, []).append(run)
        for question, static in zip(test, self._static, strict=True):
            if not question.evidence:
                continue
            # Counted by evidence ref, as `bench evolution` counts recall; a turn is found by its node.
            node = {ref: node_of.get(ref) for ref in question.evidence}
            evolved = set(await _first(recall, question.text, ["semantic"], TOP))
            used = {ref for ref, i in node.items() if i in by_turn}
            missed = {ref for ref in used if node[ref] not in static}
            words, named = _words(question.text), _words(question.text, names)
            shared = {ref for ref in missed if any(words & _words(r.question.text) for r in by_turn[node[ref]])}
            beyond = {r for r in missed if any(named & _words(t.question.text, names) for t in by_turn[node[r]])}
            n, hit = len(node), sum(1 for i in node.values() if i in static)
            found = sum(1 for i in node.values() if i in evolved)
            self.shares.append(
                (hit / n, found / n, (hit + len(missed)) / n, (hit + len(shared)) / n, (hit + len(beyond)) / n)
            )
            self.counts.update(evidence=n, a=len(used), ab=len(missed), abc=len(shared), abc_named=len(beyond))
            if shared:
                turns = {node[ref] for ref in shared}
                reasons = await self._explain(recall, question.text, turns, evolved, words, by_turn)
                self.why.update(reasons.values())
                self.why_named.update(reasons[node[ref]] for ref in beyond)

    async def _explain(
        self, recall: Recall, text: str, turns: set[int], evolved: set[int], words: set[str], by_turn: dict
    ) -> dict[int, str]:
        """Why each of `turns` is or is not in the evolving arm's first ten."""
        deep = await recall.recall(text, k=DEPTH, kinds=[], record=False)
        matches = sorted((r for r in deep if r.parts.get("lexical", 0.0) > 0), key=lambda r: -r.parts["lexical"])
        rank = {r.node.id: i for i, r in enumerate(matches)}
        facts = await recall.recall(text, k=DEPTH, kinds=["semantic"], record=False)
        tenth = facts[TOP - 1].score if len(facts) >= TOP else 0.0
        found = {r.node.id: r for r in facts}
        reasons: dict[int, str] = {}
        for node_id in turns:
            episodes = [r.episode for r in by_turn[node_id] if words & _words(r.question.text)]
            ranks = [rank[e] for e in episodes if e in rank]
            if node_id in evolved:
                reasons[node_id] = "lifted"
            elif not ranks:
                reasons[node_id] = "no_match"
            elif min(ranks) >= recall.ranking.spread:
                reasons[node_id] = "not_spread"
            else:
                reasons[node_id] = "too_weak"
                mine = found.get(node_id)
                self.weak.append((mine.parts.get("graph", 0.0) if mine else 0.0, tenth))
        return reasons

    def report(self) -> dict[str, Any]:
        if not self.shares:
            return {"test_questions": 0}
        means = [round(statistics.fmean(row[i] for row in self.shares), 4) for i in range(5)]
        static, evolving, ab, abc, named = means
        result: dict[str, Any] = {"test_questions": len(self.shares), **self.counts}
        result |= {"static_at_10": static, "evolving_at_10": evolving}
        result |= {"ceiling_ab_at_10": ab, "ceiling_abc_at_10": abc, "ceiling_abc_named_at_10": named}
        result |= {"rise_ab": round(ab - static, 4), "rise_abc": round(abc - static, 4)}
        result["rise_abc_named"] = round(named - static, 4)
        reasons = ("lifted", "no_match", "not_spread", "too_weak")
        result["why"] = {key: self.why.get(key, 0) for key in reasons}
        result["why_named"] = {key: self.why_named.get(key, 0) for key in reasons}
        if self.weak:
            result["weak_graph_part"] = round(statistics.fmean(g for g, _ in self.weak), 4)
            result["weak_tenth_score"] = round(statistics.fmean(t for _, t in self.weak), 4)
        return result


async def _first(recall: Recall, text: str, kinds: list[str], k: int) -> list[int]:
    return [r.node.id for r in await recall.recall(text, k=k, kinds=kinds, record=False)]
