"""`done` stands on its evidence: an answer with no claim of its own, and a value a later line changes.

Driven by the scripted model over real SQLite, on a chat written one message a line.
"""

from __future__ import annotations

from pathlib import Path

from loci.memory.graph.quoted import quote_notes
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.reading.values import not_the_value, own_claims, superseded
from loci.runtime.session.session import open_session

SMALL = 135_000_000
QUESTION = "What is the test coverage percentage for my API integration module?"
FILLER = "".join(f"assistant: Here is a note about caching and retries, number {n}.\n" for n in range(40))
CHAT = (
    "user: The test coverage percentage for my API integration module is 85% right now.\n"
    + FILLER
    + "user: Update: the test coverage percentage for my API integration module is now 78%.\n"
    + FILLER
)
SHOWN = (
    "doc:1 lines 1-82:\n1| user: The test coverage percentage for my API integration module is 85% right now.\n"
    "...\n42| user: Update: the test coverage percentage for my API integration module is now 78%."
)


def test_a_claim_is_the_answers_own_only_beyond_the_questions_words() -> None:
    assert own_claims("MAXLINELEN in email.header is a header string.", "What is MAXLINELEN in email.header?") == []
    assert own_claims("Greg Ward wrote it.", "Who wrote textwrap?") == ["Greg", "Ward"]
    # the question quoted back is no claim of the answer's own; a phrase with a word of its own is
    asked = "what's grep's nickname in its readme?"
    assert own_claims('"Grep\'s nickname in its readme."', asked) == []
    assert own_claims('"fastest grep in the west"', asked) == ["fastest grep in the west"]


def test_a_claim_held_by_the_lines_from_memory_under_a_task_is_still_the_answers_own() -> None:
    """A run's task carries recalled notes under the question; they are material to ground on, not the question."""
    task = "Who keeps the waiting list?\n\n" + quote_notes("- mem:2: Marta Okafor keeps the waiting list")
    assert own_claims("Marta Okafor keeps it.", task) == ["Marta", "Okafor"]
    assert own_claims("Marta Okafor keeps it.", "Does Marta Okafor keep the waiting list?") == []


def test_the_newer_of_two_stated_values_wins() -> None:
    assert superseded("The coverage is 85%.", SHOWN, QUESTION) == ["85"]
    assert superseded("The coverage is 78%.", SHOWN, QUESTION) == []


def test_a_number_of_another_kind_on_a_later_line_changes_nothing() -> None:
    shown = SHOWN.replace("is now 78%", "has 78 tests")
    assert superseded("The coverage is 85%.", shown, QUESTION) == []
    dates = SHOWN.replace("85% right now", "measured on 23 August").replace("is now 78%", "measured on 28 August")
    assert superseded("It was measured on 23 August.", dates, QUESTION) == []  # a day of a date is no value


async def run(tmp_path: Path, steps: list[str], question: str = QUESTION) -> tuple[ScriptedModel, object]:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "chat.txt"
    path.write_text(CHAT, encoding="utf-8")
    model = ScriptedModel(steps, parameters=SMALL, context_window=4_096)
    async with open_session(model, tmp_path / "loci.db", files=[path]) as session:
        result = await session.agent.run(question)
    model.check_used()
    return model, result


async def test_an_older_value_is_not_done_and_the_newer_one_is(tmp_path: Path) -> None:
    _, older = await run(tmp_path / "a", ["The coverage is 85%.", "The coverage is 85%."])  # sent back once
    assert older.status == "partial" and "later line" in (older.reason or "")
    _, newer = await run(tmp_path / "b", ["The coverage is 78%."])
    assert newer.status == "done" and newer.answer == "The coverage is 78%."


async def test_an_answer_with_no_claim_of_its_own_is_never_done(tmp_path: Path) -> None:
    _, result = await run(tmp_path, ["The coverage is right now."])  # its words are on line 1, no value is
    assert [span.start for span in result.evidence] == [1]
    assert result.status == "partial" and "no claim of its own" in (result.reason or "")


TAIL = (
    "doc:1 lines 1-24:\n1| TAIL(1)                     User Commands                    TAIL(1)\n"
    "9|        Print the last 10 lines of each FILE to standard output.\n"
    "24|        -s, --sleep-interval=N with -f, sleep for approximately N seconds (default 1.0) between\n"
)


def test_a_number_asked_for_stands_as_a_number_of_its_own_on_a_line_about_it() -> None:
    asked = "by default how many lines from the end does tail show?"
    assert not_the_value("10", TAIL, asked) is None
    # `1` of the page's `TAIL(1)` or of `1.0` is no count of lines
    assert "no number of its own" in (not_the_value("The answer is: 1", TAIL, asked) or "")
    assert not_the_value("The answer is: 1", TAIL, "What does tail do?") is None  # no number asked
    # a number before a closing bracket stands as its own (textwrap's docstring `width (default: 70)`)
    textwrap = "doc:1 lines 17-26:\n17| class TextWrapper:\n26|       width (default: 70)\n"
    assert not_the_value("The default width is 70.", textwrap, "What is the default width of TextWrapper?") is None


def test_a_list_of_numbers_is_no_number_asked_for() -> None:
    shown = (
        "doc:1 lines 3-5:\n3| user: my weather app needs 100% test coverage and 15% fewer errors\n"
        "4| assistant: ok\n5| user: I also want 3 cities cached for 2 hours\n"
    )
    asked = "How many different features did I mention wanting to handle across my weather app?"
    listed = "1. 100% test coverage\n2. 15% error handling\n3. 3 cities"
    assert "lists 5 of them" in (not_the_value(listed, shown, asked) or "")
    assert not_the_value("3 cities for 2 hours", shown, "How many cities are cached, and for how long?") is None


def test_a_total_stands_only_on_a_line_that_states_one() -> None:
    shown = (
        "doc:1 lines 4-9:\n4| user: I've completed 12 triangle problems so far this week\n"
        "9| user: I've added two new projects, so now I have a total of 10 cards in my gallery\n"
    )
    asked = "How many triangle problems have I completed in total across all sessions?"
    assert "not the total" in (not_the_value("12", shown, asked) or "")
    assert not_the_value("12", shown, "How many triangle problems have I completed this week?") is None
    assert not_the_value("10", shown, "How many cards do I have in total in my gallery?") is None
