"""A chat keeps the thread: a copied answer is `partial`, and a follow-up resolves against the earlier turn."""

from __future__ import annotations

from pathlib import Path

import anyio

from loci.runtime.cli.chat import open_chat
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.session.session import open_session
from loci.runtime.session.thread import Thread, refers_back

SMALL = 135_000_000
TEXTWRAP = (
    '"""Text wrapping and filling."""\n'
    "# Written by Greg Ward <gward@python.net>\n"
    "class TextWrapper:\n"
    "    # The default width is 70 columns; shorten's placeholder is ' [...]'.\n"
    "    def __init__(self, width=70, placeholder=' [...]'):\n"
    "        self.width = width\n"
    "        self.placeholder = placeholder\n"
    "def shorten(text, width, **kwargs):\n"
    "    w = TextWrapper(width=width, max_lines=1, **kwargs)\n"
)
FIRST = "The default width of TextWrapper is 70."


async def _chat(tmp_path: Path, replies: list[str], lines: list[str]) -> tuple[ScriptedModel, list[str]]:
    source = tmp_path / "textwrap.py"
    source.write_text(TEXTWRAP, encoding="utf-8")
    model = ScriptedModel(replies, parameters=SMALL, context_window=4_096, repeat_last=True)
    out: list[str] = []
    async with open_session(model, tmp_path / "loci.db", files=[source]) as session:
        chat = await open_chat(session, "scripted", write=out.append, objects=list(session.loaded))
        with anyio.fail_after(60):
            for line in lines:
                await chat.ask(line)
    return model, out


async def test_an_answer_that_repeats_turn_1s_to_another_question_is_partial(tmp_path: Path) -> None:
    _, out = await _chat(
        tmp_path, [FIRST, FIRST], ["What is the default width of TextWrapper?", "What placeholder does shorten use?"]
    )
    answers = [line for line in out if line.startswith("loci> ")]
    assert answers[0] == f"loci> {FIRST}"
    assert "(partial: " in answers[1] and "the answer repeats turn 1's, to another question" in answers[1]


async def test_a_follow_up_is_asked_with_the_turn_it_refers_to(tmp_path: Path) -> None:
    lines = ["What is the default width of TextWrapper?", "where is it set?"]
    model, out = await _chat(tmp_path, [FIRST, "In TextWrapper's __init__."], lines)
    asked = model.calls[-1].messages[-1]["content"]
    assert "where is it set?" in asked and "What is the default width of TextWrapper?" in asked and FIRST in asked
    assert "repeats" not in "\n".join(out)


async def test_arithmetic_on_the_previous_answer_is_worked_out(tmp_path: Path) -> None:
    # the bundled model recalled 70 for "double it" and did not double it
    model, out = await _chat(tmp_path, [FIRST], ["What is the default width of TextWrapper?", "Double it."])
    answers = [line for line in out if line.startswith("loci> ")]
    assert answers[1] == "loci> 140 (70 × 2, from turn 1's answer)"
    assert len(model.calls) == 1  # no model call for the arithmetic


def test_the_arithmetic_a_follow_up_asks() -> None:
    thread = Thread()
    assert thread.computed("Double it.") is None  # nothing before it
    thread.add("What is the value of MAXLINE in ftplib?", "8,192")
    assert thread.computed("Double it.") == "16384 (8192 × 2, from turn 1's answer)"
    assert thread.computed("What is half of that?") == "4096 (8192 / 2, from turn 1's answer)"
    assert thread.computed("add 8 to it") == "8200 (8192 + 8, from turn 1's answer)"
    assert thread.computed("divide it by 0") is None
    assert thread.computed("What does it mean?") is None  # a follow-up, but no arithmetic
    assert thread.computed("What is 2 times 3 in the docs for MAXLINE and for the other limits?") is None  # long
    thread.add("Which ports?", "21 and 990")
    assert thread.computed("Double it.") is None  # two numbers: which one is meant is not known


def test_only_a_short_line_that_points_back_carries_the_previous_exchange() -> None:
    thread = Thread()
    thread.add("What is the default width?", "70")
    assert refers_back("double it") and refers_back("What does that function return?")
    assert not refers_back("What placeholder does shorten use?")
    assert thread.task("What placeholder does shorten use?") == "What placeholder does shorten use?"
    assert "70" in thread.task("double it")
    assert thread.repeats("What is the width of the wrapper?", "70") is None  # a short answer may be right twice
    thread.add("Who wrote textwrap?", "Greg Ward wrote the module.")
    assert thread.repeats("Who wrote textwrap?", "Greg Ward wrote the module.") is None  # the same question
    assert thread.repeats("Who maintains it now?", "Greg Ward wrote the module.") == 2
    # the first answer's frame with its number, to another question (the bundled model's turn 3)
    thread.add("What is the default width of TextWrapper?", "The default width of TextWrapper is 70 characters.")
    copied = "The default tabsize of TextWrapper is 70 characters."
    assert thread.repeats("What is the default tabsize of TextWrapper?", copied) == 3
    assert thread.repeats("What is the default tabsize of TextWrapper?", "The default tabsize is 8 columns.") is None


async def test_a_copied_answer_is_asked_again_from_the_file_alone(tmp_path: Path) -> None:
    second = "The placeholder of shorten is ' [...]'."

    def reply(request: Request) -> str:  # copies turn 1 while the chat's window shows it
        prompt = request.messages[-1]["content"]
        return second if "Task: What placeholder" in prompt and "you asked:" not in prompt else FIRST

    questions = ["What is the default width of TextWrapper?", "What placeholder does shorten use?"]
    model, out = await _chat(tmp_path, [reply], questions)
    answers = [line for line in out if line.startswith("loci> ")]
    assert "[...]" in answers[1] and "repeats" not in answers[1]
    assert any("you asked:" in call.messages[-1]["content"] for call in model.calls)  # first with the window
