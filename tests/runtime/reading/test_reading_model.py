"""Reading a conversation on the bundled GGUF: loaded by turns, the found line read, never the prompt's words.

The conversation is written as a user would have it, one dated turn a
line, and is far larger than the bundled model's window, so the run must
find the line before it can answer. Where the model must misbehave first
(recite the prompt's example), a thin wrapper gives that reply and the real
model gives every other.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.models.base import Model
from loci.runtime.prompt.regions import EXAMPLE_TEXTS, PLAIN, system_text
from loci.runtime.reading.answers import sentences
from loci.runtime.session.session import open_session
from tests.runtime.reading.test_answers_model import FirstReplies

pytestmark = pytest.mark.model

FILLER = [
    "Did you see the game last night?",
    "Yes, it was a close one until the end.",
    "I am cooking pasta for dinner tonight.",
    "The weather has been grey all week.",
    "Work was busy, lots of meetings again.",
]
FACT = "Mostly just bottle caps, but a couple of times I found old coins with the metal detector."
QUESTION = "What has John mostly found with the metal detector so far?"


@pytest.fixture
def conversation(tmp_path: Path) -> Path:
    lines = []
    for day in range(1, 29):
        for i, text in enumerate(FILLER * 3):
            speaker = "John" if i % 2 else "Maria"
            lines.append(f"[{day} March 2023] {speaker}: {text}")
            if day == 17 and i == 6:
                lines.append("[17 March 2023] Maria: So what has the metal detector turned up?")
                lines.append(f"[17 March 2023] John: {FACT}")
    path = tmp_path / "chat.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def recites(answer: str, frame: str) -> bool:
    flat = " ".join(frame.lower().split())
    return any(len(s) >= 8 and " ".join(s.lower().split()) in flat for s in sentences(answer))


async def test_a_conversation_file_is_loaded_by_turns(tmp_path: Path, conversation: Path, gguf: Model) -> None:
    async with open_session(gguf, tmp_path / "loci.db", files=[conversation]) as session:
        obj = session.loaded[0]
        span = await session.contexts.read(obj.id, 1, 2)
    assert obj.meta["format"] == "conversation" and obj.meta["speakers"] == ["Maria", "John"]
    assert obj.lines == obj.meta["turns"] == 28 * 15 + 2 and obj.meta["sessions"] == 28
    first = "[1 March 2023] Maria: Did you see the game last night? (last night = 28 February 2023)"
    assert span.text.split("\n")[0] == first  # a turn a line, its relative date resolved against its day


async def test_the_found_line_is_read_and_answered_from(tmp_path: Path, conversation: Path, gguf: Model) -> None:
    config = RunConfig(limits=Limits(max_turns=4))
    async with open_session(gguf, tmp_path / "loci.db", config, files=[conversation]) as session:
        result = await session.agent.run(QUESTION)
        look = await session.contexts.read(result.turns[0].observation_id or "", 1)
    assert result.plan is not None and result.plan.mode == "navigate" and result.plan.tools == []
    assert f"John: {FACT}" in look.text  # the hit line whole, speaker and text
    assert "bottle caps" in result.answer.lower() or "coins" in result.answer.lower()
    assert result.evidence and FACT in result.evidence[0].text
    assert not recites(result.answer, "\n".join([PLAIN, *EXAMPLE_TEXTS]))


async def test_a_recited_answer_is_never_returned(tmp_path: Path, conversation: Path, gguf: Model) -> None:
    recital = " ".join([EXAMPLE_TEXTS[2]] * 6)
    model = FirstReplies(gguf, [recital, recital], structured=False)
    async with open_session(model, tmp_path / "loci.db", files=[conversation]) as session:
        result = await session.agent.run(QUESTION)
        frame = "\n".join([system_text(session.agent.host.tools), PLAIN, *EXAMPLE_TEXTS])
    assert not recites(result.answer, frame) and "Zorvex" not in result.answer
    assert result.status == "partial" and "prompt's own words" in (result.reason or "")
    assert FACT in result.answer and result.answer.startswith("doc:1:")  # the line found, quoted with its id
