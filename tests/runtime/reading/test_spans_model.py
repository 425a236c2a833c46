"""A date asked of a long conversation on the bundled GGUF: answered by the date on the line that says it.

The conversation is far larger than the bundled model's window, one dated
turn a line, so the run retrieves and then reads; the question asks "When",
so the answer is the date on the best lines that the model scores likeliest,
not free text.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from loci.runtime.models.base import Model
from loci.runtime.session.session import open_session
from tests.runtime.reading.test_reading_model import FILLER as SMALL_TALK

pytestmark = pytest.mark.model

FILLER = SMALL_TALK[:4]  # the reading test's small talk, four lines of it


async def test_a_question_whose_answer_is_a_date_on_a_shown_line_answers_that_date(tmp_path: Path, gguf: Model) -> None:
    lines: list[str] = []
    fact = 0
    for day in range(1, 29):
        for i, text in enumerate(FILLER * 3):
            lines.append(f"[{day} March 2023] {'John' if i % 2 else 'Maria'}: {text}")
        if day == 17:
            fact = len(lines) + 1
            lines.append("[17 March 2023] John: We adopted our dog Pepper from the shelter on 4 February 2021.")
    path = tmp_path / "chat.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with anyio.fail_after(300):
        async with open_session(gguf, tmp_path / "loci.db", files=[path]) as session:
            result = await session.agent.run("When did John adopt his dog Pepper?")
    assert result.plan is not None and "retrieve then read" in result.plan.tools_reason
    assert result.answer == "4 February 2021"  # not the line's date tag, "17 March 2023"
    assert [(cited.start, cited.end) for cited in result.evidence] == [(fact, fact)]
