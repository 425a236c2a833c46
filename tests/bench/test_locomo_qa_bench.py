"""The LoCoMo set of the qa benchmark: sampling, the plain-retrieval baseline, scoring (scripted model)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from loci.bench.qa.locomo import bm25_top, contains, f1, locomo_set, normalise, run_locomo
from loci.memory.errors import UsageError
from loci.runtime.loop.records import RunConfig
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "John", "text": f"Nothing much happened on day {i}.", "dia_id": f"D1:{i}"} for i in range(1, 60)
        ]
        + [{"speaker": "John", "text": "Mostly bottle caps with the metal detector.", "dia_id": "D1:60"}],
    },
    "qa": [
        {"question": "What has John found with the metal detector?", "answer": "bottle caps", "category": 4},
        {"question": "When did John go?", "answer": "8 May 2023", "category": 2},
        {"question": "Adversarial?", "answer": "none", "category": 5},
    ],
}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE]), encoding="utf-8")
    return path


def test_questions_are_sampled_by_category_and_seed_and_turns_are_dated_lines(data: Path) -> None:
    questions = locomo_set(data, 10, seed=1)
    assert {q.category for q in questions} == {2, 4} and questions == locomo_set(data, 10, seed=1)
    assert questions[0].lines[-1] == "[8 May 2023] John: Mostly bottle caps with the metal detector."


def test_a_file_not_in_the_locomo_format_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}', encoding="utf-8")
    with pytest.raises(UsageError, match="not in the LoCoMo format"):
        locomo_set(bad, 5, 0)
    with pytest.raises(UsageError, match="no LoCoMo file"):
        locomo_set(tmp_path / "missing.json", 5, 0)


def test_scores_are_locomo_token_f1_and_whole_word_containment() -> None:
    with sqlite3.connect(":memory:") as stems:
        assert f1("The bottle caps!", "bottle caps", stems) == 1.0
        assert f1("a hoodie", "Hoodies", stems) == 1.0  # Porter stems, as LoCoMo's scorer
        assert f1("nothing", "bottle caps", stems) == 0.0
    assert normalise("The Bottle-caps, an ode") == "bottlecaps ode"
    assert contains("Found bottle caps.", "bottle caps") and not contains("27 June", "2")


def test_plain_bm25_ranks_the_turn_with_the_rare_words_first(data: Path) -> None:
    q = locomo_set(data, 10, seed=1)[0]
    assert "metal detector" in bm25_top(q.lines, "What has John found with the metal detector?", k=1)[0]


async def test_the_three_systems_report_flat_keys(data: Path) -> None:
    questions = [q for q in locomo_set(data, 10, seed=1) if q.category == 4]

    def reply(request: Request) -> dict[str, Any] | str:
        return "Mostly bottle caps."

    model = ScriptedModel([reply], repeat_last=True, parameters=135_000_000, context_window=2_048)
    report = await run_locomo(model, questions, RunConfig())
    assert report["locomo_n"] == 1 and report["locomo_recited"] == 0
    assert report["locomo_loci_f1"] == report["locomo_rag_f1"] == report["locomo_direct_f1"] == 0.8
    assert report["locomo_loci_hit"] == 1.0
    assert {"locomo_loci_s_median", "locomo_rag_s_median", "locomo_direct_s_median"} <= report.keys()
