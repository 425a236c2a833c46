"""`loci chat` on the bundled GGUF: a later line asks about an earlier one, and the answer uses it."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from loci.runtime.cli.chat import chat_loop, open_chat
from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.models.base import Model
from loci.runtime.session.session import open_session
from tests.runtime.cli.test_chat import Console

pytestmark = pytest.mark.model

HARBOR = Path(__file__).resolve().parents[3] / "examples" / "harbor.md"


async def test_the_model_answers_from_an_earlier_line_of_the_chat(gguf: Model, tmp_path: Path) -> None:
    console = Console(["How much does a plot cost?", "What was my first question to you?"])
    config = RunConfig(limits=Limits(max_turns=8))
    async with open_session(gguf, tmp_path / "loci.db", config, files=[HARBOR]) as session:
        chat = await open_chat(session, gguf.name, write=console.write)
        with anyio.fail_after(600):
            await chat_loop(chat, console.read)
        messages = await chat.log.messages(chat.record.id)
    answers = [m.text for m in messages if m.role == "assistant"]
    assert len(answers) == 2, console.text
    assert "35 euros" in answers[0]
    later = answers[1].lower()
    # Either it names the first question's words, or it says it could not stand on what it was shown:
    # a chat never says `done` on a wrong answer to a question about itself.
    assert ("plot" in later and "cost" in later) or "(partial:" in later, answers[1]
    assert "window now 2 items" in console.text
