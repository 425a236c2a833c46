"""The qa benchmark's question sets and scoring, with the scripted model (the GGUF run is the benchmark)."""

from __future__ import annotations

from typing import Any

from loci.bench.qa.data import long_set, short_set
from loci.bench.qa.qa import _summary, direct_answer, loci_answer
from loci.runtime.loop.records import RunConfig
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel


def test_question_sets_are_seeded_and_every_answer_is_a_span_of_its_document() -> None:
    short, long = short_set(10, seed=3), long_set(2, words=5_000, seed=3)
    assert short == short_set(10, seed=3) and short != short_set(10, seed=4)
    assert all(q.expected in q.document for q in short + long)
    assert max(len(q.document.split()) for q in short) < 400 and min(len(q.document.split()) for q in short) < 30
    assert all(len(q.document.split()) > 5_000 for q in long)
    assert len({q.name for q in short}) == 10


async def test_both_sides_are_scored_by_the_expected_span(tmp_path: Any) -> None:
    q = short_set(1)[0]

    def reply(request: Request) -> dict[str, Any] | str:
        return {"state": "seen", "answer": True} if request.schema is not None else f"It is {q.expected}."

    model = ScriptedModel([reply], repeat_last=True, context_window=4_096)
    assert (await direct_answer(model, q))[0] is True
    right, seconds, answer = await loci_answer(model, q, RunConfig())
    assert right and answer == f"It is {q.expected}." and seconds >= 0
    assert [r.purpose for r in model.calls] == ["direct", "act", "answer"]
    summary = _summary("short", "loci", [(True, 1.0, "a"), (False, 3.0, "b")])
    assert (summary["short_loci_acc"], summary["short_loci_s_median"]) == (0.5, 2.0)
