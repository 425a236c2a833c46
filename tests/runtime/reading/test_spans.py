"""Extracting a date: a question that asks for one is answered by the date on the best line the model prefers.

Driven by the scripted model (with and without a scorer) over real SQLite;
the bundled GGUF's side is in `test_spans_model.py`.
"""

from __future__ import annotations

from pathlib import Path

from loci.runtime.models.base import can_score
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.models.wrapper import ModelWrapper
from loci.runtime.reading.spans import Span, answer_kind, candidate_spans
from loci.runtime.session.session import open_session
from tests.runtime.reading.test_grounding import ARGPARSE, SMALL

WHEN = "When did Raymond Hettinger become the maintainer of argparse?"
FILLER = "".join(f"# routine comment {i} about nothing in particular\n" for i in range(600))


def long_argparse(tmp_path: Path) -> Path:
    """argparse's head, then more than a small model's window: a run on it retrieves, then reads."""
    path = tmp_path / "argparse.py"
    # two dates on the line that answers: the model's likelihood chooses between them
    path.write_text(ARGPARSE.replace("2019:", "2019 (announced 1 July 2019):") + FILLER, encoding="utf-8")
    return path


def test_a_question_asks_for_a_date_or_not() -> None:
    assert answer_kind("When does my first sprint end?") == "date"
    assert answer_kind("What year was it founded?") == "date"
    assert answer_kind("How many commits have been merged?") is None
    assert answer_kind("Who is the author of argparse?") is None and answer_kind("What did she paint?") is None


def test_the_candidates_are_the_dates_of_the_best_lines_those_a_turn_states_first() -> None:
    shown = (
        "doc:1 lines 139-142:\n"
        "139| [15 July 2023] Melanie: I merged the commits on 3 July 2023 and 4 July 2023.\n"
        "140| [16 July 2023] Caroline: The weather was grey for 5 days.\n"
        "141| user: the first sprint ends on March 29, and the second on April 19 2024.\n"
        "142| [17 July 2023] Melanie: The sprint review went well.\n"
    )
    best = candidate_spans(shown, "When does the first sprint end?")  # the best line, which a run would quote
    assert best == [Span("March 29", "doc:1", 141), Span("April 19 2024", "doc:1", 141)]
    # the date a turn states, not the turn's own; the turn's own when it states none; no date of line 140
    dates = candidate_spans(shown, "When were the commits merged and when does the sprint end?", lines=3)
    assert {span.text for span in dates} == {"3 July 2023", "4 July 2023", "March 29", "April 19 2024", "17 July 2023"}


async def test_a_reading_run_answers_with_the_span_the_scorer_prefers_citing_its_line(tmp_path: Path) -> None:
    path = long_argparse(tmp_path)
    model = ScriptedModel(
        [], parameters=SMALL, context_window=2_048, scorer=lambda messages, span: -float(span != "29 August 2019")
    )
    async with open_session(model, tmp_path / "loci.db", files=[path]) as session:
        result = await session.agent.run(WHEN)
    assert result.plan is not None and "retrieve then read" in result.plan.tools_reason
    assert model.calls == [] and model.scored == [["29 August 2019", "1 July 2019"]]  # no free text is written
    assert (result.answer, result.evidence[0].id, result.evidence[0].start) == ("29 August 2019", "doc:1", 2)
    assert result.status == "done"


async def test_a_model_that_cannot_score_keeps_free_generation(tmp_path: Path) -> None:
    path = long_argparse(tmp_path)
    model = ScriptedModel(
        ["Raymond Hettinger became maintainer on 29 August 2019."], parameters=SMALL, context_window=2_048
    )
    assert not can_score(model) and not can_score(ModelWrapper(model))
    async with open_session(model, tmp_path / "loci.db", files=[path]) as session:
        result = await session.agent.run(WHEN)
    model.check_used()
    assert result.plan is not None and "retrieve then read" in result.plan.tools_reason
    assert result.answer == "Raymond Hettinger became maintainer on 29 August 2019." and result.status == "done"


async def test_a_question_of_no_kind_is_written_as_free_text_on_a_model_that_scores(tmp_path: Path) -> None:
    path = long_argparse(tmp_path)
    model = ScriptedModel(["Raymond Hettinger"], parameters=SMALL, context_window=2_048, scorer=lambda m, s: 0.0)
    async with open_session(model, tmp_path / "loci.db", files=[path]) as session:
        result = await session.agent.run("Who maintains argparse now?")
    model.check_used()
    assert model.scored == [] and (result.status, result.answer) == ("done", "Raymond Hettinger")


def test_a_wrapped_model_that_scores_still_does() -> None:
    model = ScriptedModel([], scorer=lambda messages, span: 0.0)
    assert can_score(model) and can_score(ModelWrapper(model))
