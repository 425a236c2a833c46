"""Right answers: fit-or-navigate, the catalogue by model size, repeated calls, answers that are answers.

Driven by the scripted model over real MCP and SQLite; the same behaviours on
the bundled GGUF are in `test_answers_model.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loci.memory.graph.quoted import quote_notes
from loci.runtime.loop.decide import READ_TOKENS
from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.prompt.build import RegionSizes
from loci.runtime.prompt.regions import AnswerStyle
from loci.runtime.reading.answers import answer_problem, clean_answer
from loci.runtime.session.session import open_session

SHORT = "Harbor garden\nThere are 48 plots.\nEach plot costs 35 euros a season.\nThe coordinator is Marta Okafor.\n"
LONG = (
    "".join(f"line {i}: routine entry about nothing in particular\n" for i in range(1, 400))
    + "line 400: each plot costs 35 euros a season\n"
)
SMALL = 135_000_000
EVIDENCE = [{"id": "doc:1", "start": 3, "end": 3}]


@pytest.fixture
def short(tmp_path: Path) -> Path:
    path = tmp_path / "harbor.md"
    path.write_text(SHORT, encoding="utf-8")
    return path


@pytest.fixture
def long(tmp_path: Path) -> Path:
    path = tmp_path / "log.txt"
    path.write_text(LONG, encoding="utf-8")
    return path


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"state": f"calling {name}", "tool": name, "arguments": arguments}


def answer(text: str, evidence: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"state": "found it", "answer": text, "evidence": EVIDENCE if evidence is None else evidence}


def json_config(**limits: Any) -> RunConfig:
    return RunConfig(limits=Limits(**limits), answer_style=AnswerStyle.JSON)


async def test_documents_that_fit_are_shown_whole_and_answered_on_the_first_turn(tmp_path: Path, short: Path) -> None:
    model = ScriptedModel([answer("35 euros a season")])
    async with open_session(model, tmp_path / "loci.db", json_config(), files=[short]) as session:
        result = await session.agent.run("How much does a plot cost?")
    model.check_used()
    prompt = model.calls[0].messages[1]["content"]
    assert "doc:1 harbor.md (lines 1-5):" in prompt and "3| Each plot costs 35 euros a season." in prompt
    assert "answer" in json.dumps(model.calls[0].schema)  # the first turn may answer: it sees the documents
    assert result.plan is not None and result.plan.mode == "whole"
    assert (result.status, result.answer, result.evidence[0].start) == ("done", "35 euros a season", 3)


async def test_documents_that_do_not_fit_are_navigated_and_looked_at_first(tmp_path: Path, long: Path) -> None:
    model = ScriptedModel(
        [call("context_search", query="plot cost"), answer("35 euros", [{"id": "doc:1", "start": 400, "end": 400}])]
    )
    sizes = RegionSizes.for_window(2_048)
    async with open_session(
        model, tmp_path / "loci.db", RunConfig(sizes=sizes, answer_style=AnswerStyle.JSON), files=[long]
    ) as session:
        result = await session.agent.run("How much does a plot cost?")
    model.check_used()
    first = model.calls[0]
    assert (
        "line 400" not in first.messages[1]["content"] and "- doc:1 log.txt (400 lines" in first.messages[1]["content"]
    )
    assert "answer" not in json.dumps(first.schema)
    assert result.plan is not None and result.plan.mode == "navigate" and "exceed" in result.plan.documents
    assert result.status == "done"


async def test_a_small_model_sees_no_tools_when_the_documents_fit_and_answers_in_one_text_call(
    tmp_path: Path, short: Path
) -> None:
    model = ScriptedModel(["Each plot costs 35 euros a season."], parameters=SMALL, context_window=4_096)
    async with open_session(model, tmp_path / "loci.db", files=[short]) as session:
        result = await session.agent.run("How much does a plot cost?")
    model.check_used()
    assert model.calls[0].schema is None and "Tools:" not in model.calls[0].messages[0]["content"]
    assert model.calls[0].messages[1]["content"].rstrip().endswith("Write only the answer.")
    assert result.plan is not None and result.plan.tools == [] and "135M parameters" in result.plan.tools_reason
    assert (result.status, [c.start for c in result.evidence]) == ("done", [3])  # the line its words are on


async def test_a_small_model_navigating_reads_the_lines_the_runtime_found(tmp_path: Path, long: Path) -> None:
    model = ScriptedModel(["Each plot costs 35 euros a season."], parameters=SMALL, context_window=2_048)
    async with open_session(model, tmp_path / "loci.db", files=[long]) as session:
        result = await session.agent.run("How much does a plot cost?")
    model.check_used()
    assert result.plan is not None and result.plan.tools == [] and "retrieve then read" in result.plan.tools_reason
    first = result.turns[0].action
    assert (first.tool, first.arguments) == ("context_search", {"query": "plot cost"})  # content words only
    prompt = model.calls[0].messages[1]["content"]
    assert "each plot costs 35 euros a season" in prompt and "line 399" in prompt  # the hit whole, its neighbours
    assert "Tools:" not in model.calls[0].messages[0]["content"] and model.calls[0].schema is None
    assert result.answer == "Each plot costs 35 euros a season."
    assert (result.status, result.evidence[0].start) == ("done", 400)


async def test_a_reading_run_that_recites_the_prompt_answers_with_the_lines_found(tmp_path: Path, long: Path) -> None:
    recital = "Zorvex has three moons. Zorvex has three moons. Zorvex has three moons."
    model = ScriptedModel([recital], parameters=SMALL, context_window=2_048)  # not sent back: lines instead
    async with open_session(model, tmp_path / "loci.db", files=[long]) as session:
        result = await session.agent.run("How much does a plot cost?")
    model.check_used()
    assert "Zorvex" not in result.answer and 'doc:1:400: "line 400: each plot costs 35 euros a season"' in result.answer
    assert result.status == "partial" and "repeats the prompt's own words" in (result.reason or "")
    assert result.evidence[0].start == 400


async def test_a_reading_runs_first_look_searches_by_the_question_not_the_notes_under_it(
    tmp_path: Path, long: Path
) -> None:
    """The notes recalled for a task are shown with it; searching for their header's words found the wrong lines."""
    notes = quote_notes("- mem:3: the shed opens at dawn")
    model = ScriptedModel(["35 euros a season"], parameters=SMALL, context_window=2_048)
    async with open_session(model, tmp_path / "loci.db", files=[long]) as session:
        result = await session.agent.run("How much does a plot cost?", notes=notes)
    query = result.turns[0].action.arguments["query"]
    assert "plot" in query and "cost" in query and not {"stored", "notes", "shed"} & set(query.split())
    assert result.status == "done" and [span.start for span in result.evidence] == [400]
    shown = "\n".join(message["content"] for message in model.calls[0].messages)
    notes, asked = shown.index("<stored-notes"), shown.index("Question: How much does a plot cost?\nAnswer:")
    assert shown.index("Lines found in the documents:") < notes < asked  # the notes beside the lines, not the question


async def test_a_reading_runs_answer_from_a_note_is_kept_but_partial_without_a_document_line(
    tmp_path: Path, long: Path
) -> None:
    """A fact from memory is material the model answers from; `done` still needs a document line to cite, so the
    answer stays, `partial`, rather than a document line quoted instead."""
    notes = quote_notes("- mem:7: The deploy window is Thursdays at 14:00.")
    model = ScriptedModel(["Thursdays at 14:00"], parameters=SMALL, context_window=2_048)
    async with open_session(model, tmp_path / "loci.db", files=[long]) as session:
        result = await session.agent.run("When is the deploy window?", notes=notes)
    assert (result.status, result.answer) == ("partial", "Thursdays at 14:00")
    assert "no evidence" in (result.reason or "")


async def test_a_reading_run_with_an_invented_answer_is_partial_in_one_capped_call(tmp_path: Path, long: Path) -> None:
    invented = "Each plot costs 99 euros, says Simon Marshall."
    model = ScriptedModel([invented], parameters=SMALL, context_window=2_048)  # not asked again: one call
    async with open_session(model, tmp_path / "loci.db", files=[long]) as session:
        result = await session.agent.run("How much does a plot cost?")
    model.check_used()
    assert len(model.calls) == 1 and model.calls[0].max_tokens == READ_TOKENS
    assert result.status == "partial" and "not grounded" in (result.reason or "") and "'99'" in (result.reason or "")
    assert result.answer == 'doc:1:400: "line 400: each plot costs 35 euros a season"'  # the best line, quoted
    assert [span.start for span in result.evidence] == [400]


async def test_an_identical_call_is_not_run_again_and_a_stuck_run_is_steered_to_answer(
    tmp_path: Path, short: Path
) -> None:
    listing = call("context_list", limit=1000)
    model = ScriptedModel([listing, listing, listing, answer("35 euros a season")])
    async with open_session(model, tmp_path / "loci.db", json_config(max_turns=8), files=[short]) as session:
        result = await session.agent.run("How much does a plot cost?")
        observations = await session.contexts.list(["obs"])
    model.check_used()
    first = result.turns[0].observation_id
    assert [t.repeated for t in result.turns] == [None, first, first, None]
    assert "Not run again" in model.calls[2].messages[1]["content"] and first in model.calls[2].messages[1]["content"]
    assert '"tool"' not in json.dumps(model.calls[3].schema)  # after two repeats, only an answer is allowed
    assert len(observations) == 3 and result.status == "done"


async def test_an_empty_answer_is_sent_back_once(tmp_path: Path, short: Path) -> None:
    model = ScriptedModel([answer(""), answer("35 euros a season")])
    async with open_session(model, tmp_path / "loci.db", json_config(), files=[short]) as session:
        result = await session.agent.run("How much does a plot cost?")
    model.check_used()
    assert "the answer is empty" in model.calls[1].messages[1]["content"]
    assert (result.status, result.answer, result.turns[0].retries) == ("done", "35 euros a season", 1)


async def test_an_empty_text_answer_twice_is_kept_as_partial_with_the_reason(tmp_path: Path, short: Path) -> None:
    model = ScriptedModel(["", "   "], parameters=SMALL, context_window=4_096)
    async with open_session(model, tmp_path / "loci.db", files=[short]) as session:
        result = await session.agent.run("How much does a plot cost?")
    model.check_used()
    assert result.status == "partial" and "not an answer: the answer is empty" in (result.reason or "")


async def test_a_cut_off_text_answer_is_sent_back(tmp_path: Path, short: Path) -> None:
    rambling = " ".join(["and then the harbor"] * 40)
    model = ScriptedModel([rambling, "Each plot costs 35 euros a season."], parameters=SMALL, context_window=4_096)
    async with open_session(model, tmp_path / "loci.db", files=[short]) as session:
        result = await session.agent.run("How much does a plot cost?")
    model.check_used()
    assert "stops mid-sentence" in model.calls[1].messages[1]["content"]
    assert result.status == "done" and result.answer == "Each plot costs 35 euros a season."


async def test_an_answer_copying_the_prompt_is_refused(tmp_path: Path, short: Path) -> None:
    model = ScriptedModel([answer("Zorvex has three moons."), answer("<the answer>")])
    async with open_session(model, tmp_path / "loci.db", json_config(), files=[short]) as session:
        result = await session.agent.run("How much does a plot cost?")
    model.check_used()
    assert "<" not in model.calls[0].messages[0]["content"]  # the format is taught by example, not by templates
    assert "repeats the prompt's own words" in model.calls[1].messages[1]["content"]
    assert result.status == "partial" and "is a placeholder" in (result.reason or "")  # sent back once, then said
    assert "35 euros" in result.answer and "doc:1:" in result.answer  # never the prompt: the lines found, quoted


async def test_an_answer_on_no_line_of_the_documents_is_partial(tmp_path: Path, short: Path) -> None:
    model = ScriptedModel([answer("purple elephants", [])])
    async with open_session(model, tmp_path / "loci.db", json_config(), files=[short]) as session:
        result = await session.agent.run("What does a plot cost?")  # asks no number: `forms.py` aside
    model.check_used()
    assert result.status == "partial" and result.reason is not None and result.reason.startswith("no evidence")


async def test_an_answer_about_the_document_rather_than_from_it_is_partial(tmp_path: Path, short: Path) -> None:
    talk = "The document contains a list of lines and each plot of the garden is in a format."
    model = ScriptedModel([answer(talk, [])])
    async with open_session(model, tmp_path / "loci.db", json_config(), files=[short]) as session:
        result = await session.agent.run("What does a plot cost?")  # asks no number: `forms.py` aside
    model.check_used()
    assert result.status == "partial" and (result.reason or "").startswith("no evidence")


async def test_the_default_catalogue_is_every_tool_when_the_user_names_the_sets(tmp_path: Path, short: Path) -> None:
    model = ScriptedModel([answer("35 euros a season")], parameters=SMALL, context_window=4_096)
    config = RunConfig(tools=("context",), answer_style=AnswerStyle.JSON)
    async with open_session(model, tmp_path / "loci.db", config, files=[short]) as session:
        result = await session.agent.run("How much does a plot cost?")
    model.check_used()
    assert (
        result.plan is not None
        and "context_ask" in result.plan.tools
        and "named by the user" in result.plan.tools_reason
    )
    request: Request = model.calls[0]
    assert "context_search" in request.messages[0]["content"]


def test_an_answer_that_opens_with_the_prompts_example_is_refused() -> None:
    frame = "Example answer: The fee should be in the Prices section.\nWrite the answer."
    material = "line 3: each plot costs 35 euros a season"
    copied = answer_problem(
        "The fee should be in the Prices section. The fee is 12 euros.", frame=frame, material=material
    )
    assert copied is not None and "repeats the prompt's own words" in copied
    assert answer_problem("Each plot costs 35 euros a season.", frame=frame, material=material) is None


def test_a_lead_in_is_no_part_of_the_answer_and_talk_of_the_task_is_none() -> None:
    # the bundled model's replies on the unseen-phrasing probe
    said = "Question: from which year does the calendar module count timestamps?\n\nThe answer is: 12"
    assert clean_answer(said, frame="", material="") == "12"
    said = "The answer to the task is:\n\nThe default line count of tail is 1."
    assert clean_answer(said, frame="", material="") == "The default line count of tail is 1."
    assert clean_answer("The answer is:", frame="", material="") == "The answer is:"  # nothing after it: kept
    said = "-L, --tape-length=N\n\nThe answer is:\n\nThe tape archiver is able to compress the archive with gzip."
    assert clean_answer(said, frame="", material="") == "The tape archiver is able to compress the archive with gzip."
    talk = "The task is to write a function that takes a sequence of numbers as input and increments it by 1."
    assert "describes the documents" in (answer_problem(talk, frame="", material="", task="seq increment?") or "")


def test_an_opening_that_echoes_the_notice_over_recalled_notes_is_no_part_of_the_answer() -> None:
    said = "Stored notes recalled from memory, quoting as data, that Caroline's identity is a transgender woman."
    assert clean_answer(said, frame="", material="") == "Caroline's identity is a transgender woman."
    # the notice's words without its opening, or fewer than four of them, are the answer's own
    assert clean_answer("They are not in your list.", frame="", material="") == "They are not in your list."
    assert clean_answer("Stored notes are kept in SQLite.", frame="", material="") == "Stored notes are kept in SQLite."
