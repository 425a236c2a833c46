"""Answers on real files with the bundled GGUF: read from the right line, grounded, scoped to the file given.

The files are Python's own `argparse` and `tarfile` modules (they ship with
every Python) and copyright texts written here in Debian's format.
"""

from __future__ import annotations

import argparse
import tarfile
from pathlib import Path

import anyio
import pytest

from loci.runtime.cli.chat import open_chat
from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.models.base import Model, Reply, Request
from loci.runtime.models.wrapper import ModelWrapper
from loci.runtime.session.session import open_session

pytestmark = pytest.mark.model

BASH = (
    "Comment:\n This is Debian GNU/Linux's prepackaged version of the FSF's GNU Bash.\n .\n"
    " This package was put together by Matthias Klose <doko@debian.org>.\n"
    "Files: support/bash.xbm\nCopyright: (C) 1992 Simon Marshall\nLicense: GPL-3+\n"
)
BZIP2 = "Upstream-Name: bzip2\n\nFiles: *\nCopyright: 1996-2010 Julian R Seward <jseward@bzip.org>\nLicense: BSD\n"
CONFIG = RunConfig(limits=Limits(max_turns=4))


class FirstText(ModelWrapper):
    """The real model, except that its first free-text answer is the one given."""

    def __init__(self, model: Model, text: str) -> None:
        super().__init__(model)
        self.text: str | None = text

    async def generate(self, request: Request) -> Reply:
        if self.text is not None and request.schema is None:
            text, self.text = self.text, None
            return Reply(text=text, prompt_tokens=0, completion_tokens=self.count_tokens(text))
        return await self.inner.generate(request)


async def test_the_author_is_read_from_the_author_line_not_the_maintainers(tmp_path: Path, gguf: Model) -> None:
    path = Path(argparse.__file__)
    async with open_session(gguf, tmp_path / "loci.db", CONFIG, files=[path]) as session:
        result = await session.agent.run("Who is the author of argparse?")
    assert "Steven J. Bethard" in result.answer and "Hettinger" not in result.answer
    assert result.evidence and result.evidence[0].start == 1


async def test_an_identifier_question_shows_its_assignment_line(tmp_path: Path, gguf: Model) -> None:
    path = Path(tarfile.__file__)
    async with open_session(gguf, tmp_path / "loci.db", CONFIG, files=[path]) as session:
        result = await session.agent.run("What is the value of DEFAULT_FORMAT in tarfile?")
        look = await session.contexts.read(result.turns[0].observation_id or "", 1, 400, max_tokens=4_000)
    assert "DEFAULT_FORMAT = PAX_FORMAT" in look.text
    assert result.status == "partial" or "PAX_FORMAT" in result.answer or "2" in result.answer


async def test_an_invented_name_beside_the_found_line_is_never_done(tmp_path: Path, gguf: Model) -> None:
    path = tmp_path / "copyright"
    path.write_text(BASH + "".join(f"Files: lib/part{n}.c\nCopyright: FSF\n" for n in range(300)), encoding="utf-8")
    model = FirstText(gguf, "Simon Marshall, who is a GNU/BSD/Lionel project team member.")
    async with open_session(model, tmp_path / "loci.db", CONFIG, files=[path]) as session:
        result = await session.agent.run("Who put together the Debian bash package?")
    assert not (result.status == "done" and "Lionel" in result.answer)
    assert result.status == "partial" or "Klose" in result.answer


async def test_a_chat_with_a_file_answers_from_it_in_a_home_with_another(tmp_path: Path, gguf: Model) -> None:
    bash, bzip2 = tmp_path / "bash-copyright", tmp_path / "bzip2-copyright"
    bash.write_text(BASH, encoding="utf-8")
    bzip2.write_text(BZIP2, encoding="utf-8")
    async with open_session(gguf, tmp_path / "loci.db", CONFIG, files=[bash]):
        pass
    out: list[str] = []
    async with open_session(gguf, tmp_path / "loci.db", CONFIG, files=[bzip2]) as session:
        chat = await open_chat(session, gguf.name, write=out.append, objects=list(session.loaded))
        with anyio.fail_after(300):
            await chat.ask("Who holds the copyright of bzip2?")
    answer = chat.last.answer if chat.last else ""
    assert "Seward" in answer and "Klose" not in answer and "Marshall" not in answer
