"""A reading run's second ask, of one line: a copied turn becomes the value it holds, or the first answer stands.

Driven by the scripted model over real SQLite; the conversation is written a
turn a line, as the LoCoMo set writes it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.models.scripted import ScriptedModel
from runtime.reading.focus import bare_head, copied_line, focus_prompt, shown_rows
from runtime.reading.look import Line
from runtime.session.session import open_session

SMALL = 135_000_000
CHAT = (
    "".join(f"[{n} May 2023] Jon: We talked about the weather and the traffic on day {n}.\n" for n in range(1, 30))
    + "[8 June 2023] Gina: I got the Golden Shoe trophy from the dance contest last week!\n"
    + "".join(f"[{n} June 2023] Jon: The studio floor needs a new coat of paint, day {n}.\n" for n in range(9, 30))
)
TURN = "[8 June 2023] Gina: I got the Golden Shoe trophy from the dance contest last week!"
QUESTION = "What did Gina receive from the dance contest?"


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    path = tmp_path / "chat.txt"
    path.write_text(CHAT, encoding="utf-8")
    return path


def test_a_copied_turn_and_a_bare_turn_head_are_told_from_an_answer() -> None:
    rows = shown_rows(f"doc:1 lines 30-30:\n30| {TURN}\n31| [9 June 2023] Jon: The studio floor, day 9.")
    assert [(row.id, row.number) for row in rows] == [("doc:1", 30), ("doc:1", 31)]
    assert copied_line(TURN, rows) == rows[0] and copied_line("Gina: I got the Golden Shoe trophy", rows)
    assert copied_line("A trophy.", rows) is None and copied_line("SMTP_PORT = 25", rows) is None
    assert bare_head("[8 June 2023] Gina:", QUESTION) and bare_head("[8 June 2023]", QUESTION)
    assert not bare_head("[8 June 2023]", "When did Gina win the trophy?")


def test_the_line_is_asked_of_without_its_number_date_or_speaker() -> None:
    prompt = focus_prompt(Line("doc:1", 30, TURN, 0.0), QUESTION)
    assert prompt.startswith("I got the Golden Shoe trophy from the dance contest last week!\n")
    assert "8 June" not in prompt
    assert prompt.endswith(f"Question: {QUESTION}\nAnswer:")


async def test_a_copied_turn_is_asked_again_of_its_line_and_the_value_is_the_answer(tmp_path: Path, chat: Path) -> None:
    model = ScriptedModel([TURN, "The Golden Shoe trophy."], parameters=SMALL, context_window=2_048)
    async with open_session(model, tmp_path / "loci.db", files=[chat]) as session:
        result = await session.agent.run(QUESTION)
    model.check_used()
    assert "I got the Golden Shoe" in model.calls[1].messages[-1]["content"].split("\n")[0]
    assert result.answer == "The Golden Shoe trophy." and [(s.id, s.start) for s in result.evidence] == [("doc:1", 30)]
    assert result.status == "done"


@pytest.mark.parametrize("second", [TURN, "A trophy."])
async def test_a_second_answer_that_is_a_turn_or_says_less_than_the_line_copied_leaves_the_first(
    tmp_path: Path, chat: Path, second: str
) -> None:
    model = ScriptedModel([TURN, second], parameters=SMALL, context_window=2_048)
    async with open_session(model, tmp_path / "loci.db", files=[chat]) as session:
        result = await session.agent.run(QUESTION)
    model.check_used()
    assert result.answer == TURN  # the line itself, word for word, is a truer answer than a claim-less one
