"""Reading what a search found: answers cleaned of the prompt's words, a repeated search reading the next hit.

Driven by the scripted model over real MCP and SQLite; the bundled GGUF is in
`test_reading_model.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loci.memory.graph.quoted import NOTICE, quote_notes
from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.prompt.regions import AnswerStyle
from loci.runtime.reading.answers import answer_problem, clean_answer
from loci.runtime.session.session import open_session

FRAME = "You are Loci.\nTo answer, for example: Zorvex has three moons.\nWrite only the answer."
LONG = (
    "".join(f"line {i}: routine entry about nothing in particular\n" for i in range(1, 300))
    + "line 300: the plot fee is 35 euros\n"
    + "".join(f"line {i}: routine entry about nothing in particular\n" for i in range(301, 400))
    + "line 400: a plot fee rise to 40 euros was refused\n"
)


def test_an_answer_is_cut_at_its_first_repeated_sentence() -> None:
    looped = "The plot costs 35 euros. It is paid in May. The plot costs 35 euros. It is paid in May."
    assert clean_answer(looped, frame=FRAME, material="") == "The plot costs 35 euros. It is paid in May."


def test_the_prompts_own_sentences_are_dropped_and_nothing_left_means_no_answer() -> None:
    mixed = "Zorvex has three moons. The plot costs 35 euros."
    assert clean_answer(mixed, frame=FRAME, material="") == "The plot costs 35 euros."
    assert clean_answer("Zorvex has three moons.\nWrite only the answer.", frame=FRAME, material="") == ""
    # the material's own words are an answer, even when the prompt holds them too
    assert clean_answer("Zorvex has three moons.", frame=FRAME, material="Zorvex has three moons.") != ""


def test_the_notice_that_frames_recalled_notes_is_never_an_answer() -> None:
    # recalled notes carry the notice inside what the run shows, yet it is Loci's words, not the material's
    material = quote_notes("[8 May 2023] Caroline: I researched adoption agencies.")
    assert NOTICE in material
    assert clean_answer(NOTICE, frame=FRAME + "\n" + NOTICE, material=material) == ""
    assert answer_problem(NOTICE, frame=FRAME + "\n" + NOTICE, material=material) is not None


def test_a_line_copied_with_its_number_loses_the_number() -> None:
    assert clean_answer("19| Caroline: I paint.", frame=FRAME, material="") == "Caroline: I paint."


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"state": f"calling {name}", "tool": name, "arguments": arguments}


async def test_a_repeated_search_reads_the_next_best_hit_whole(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_text(LONG, encoding="utf-8")
    search = call("context_search", query="plot fee", ids=["doc:1"])
    done = {"state": "found", "answer": "35 euros", "evidence": [{"id": "doc:1", "start": 300, "end": 300}]}
    model = ScriptedModel([search, search, search, done], context_window=4_096)
    config = RunConfig(limits=Limits(max_turns=6), answer_style=AnswerStyle.JSON)
    async with open_session(model, tmp_path / "loci.db", config, files=[path]) as session:
        result = await session.agent.run("What is the plot fee?")
    model.check_used()
    second, third = model.calls[2].messages[1]["content"], model.calls[3].messages[1]["content"]
    assert "The next best hit, read whole" in second and "Not run again" not in second
    shown = {line for line in ("line 300: the plot fee", "line 400: a plot fee rise") if line in second}
    assert len(shown) == 1 and (shown.pop().split(":")[0] not in third.split("read whole")[-1])  # a new hit each time
    assert [turn.repeated for turn in result.turns[:3]] == [None, "obs:2", "obs:2"]
    assert result.answer == "35 euros" and result.status == "done"
