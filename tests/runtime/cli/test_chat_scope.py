"""`loci chat --file X` reads X and its own turns, not the home's other documents, unless asked (`--all`)."""

from __future__ import annotations

from pathlib import Path

import anyio

from loci.runtime.cli.chat import open_chat
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.session.session import open_session

SMALL = 135_000_000
BASH = "Files: *\nCopyright: (C) 1987-2022 Free Software Foundation, Inc.\nput together by Matthias Klose\n"
BZIP2 = "Upstream-Name: bzip2\nFiles: *\nCopyright: 1996-2010 Julian R Seward <jseward@bzip.org>\n"
QUESTION = "Who holds the copyright of bzip2?"


async def ask(tmp_path: Path, *, scoped: bool, question: str = QUESTION) -> tuple[list[str], str]:
    """The prompts the model was shown (to write, then to score spans on), and the chat's output."""
    bash, bzip2 = tmp_path / "bash-copyright", tmp_path / "bzip2-copyright"
    bash.write_text(BASH, encoding="utf-8")
    bzip2.write_text(BZIP2, encoding="utf-8")
    db = tmp_path / "loci.db"
    async with open_session(ScriptedModel([]), db, files=[bash]):
        pass  # the home already holds another document
    prompts: list[str] = []

    def scorer(messages: list[dict[str, str]], candidate: str) -> float:  # the prompt the spans are scored on
        prompts.append(messages[1]["content"])
        return 0.0 if candidate == "Julian R Seward" else -5.0

    # Scoped, the chat reads the file alone and answers with the value of its `Copyright:` field, the span the
    # model scores likeliest, writing no free text; over the whole home the model writes the answer to a question
    # no span answers.
    replies = [] if scoped else ["Julian R Seward"]
    model = ScriptedModel(replies, parameters=SMALL, context_window=4_096, scorer=scorer)
    out: list[str] = []
    async with open_session(model, db, files=[bzip2]) as session:
        objects = list(session.loaded) if scoped else None
        chat = await open_chat(session, "scripted", write=out.append, objects=objects)
        with anyio.fail_after(30):
            await chat.ask(question)
    model.check_used()
    return [call.messages[1]["content"] for call in model.calls] + prompts, "\n".join(out)


async def test_a_chat_with_a_file_reads_that_file_and_not_the_homes_others(tmp_path: Path) -> None:
    shown, out = await ask(tmp_path, scoped=True)
    assert shown
    assert all("Julian R Seward" in prompt and "Matthias Klose" not in prompt for prompt in shown)
    assert "loci> Julian R Seward" in out and "partial" not in out


async def test_a_chat_over_the_whole_home_reads_every_document(tmp_path: Path) -> None:
    shown, _ = await ask(tmp_path, scoped=False, question="What do the copyright files say about bzip2?")
    assert shown
    assert "Julian R Seward" in shown[0] and "Matthias Klose" in shown[0]
