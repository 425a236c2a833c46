"""Questions asked of real files as people ask them, on the bundled GGUF: the value asked, `done` only for it.

The files are the machine's own: Python's standard library, found where this
Python keeps it (`sysconfig`, as `bench.qa.files` finds it), and `ls`'s
manual rendered by `man -P cat` (man-db, which Debian installs).
"""

from __future__ import annotations

import subprocess
import sysconfig
from pathlib import Path

import anyio
import pytest

from loci.runtime.loop.records import RunResult
from loci.runtime.models.base import Model
from loci.runtime.session.session import open_session

pytestmark = pytest.mark.model

STDLIB = Path(sysconfig.get_paths()["stdlib"])


async def ask(tmp_path: Path, model: Model, path: Path, question: str) -> RunResult:
    with anyio.fail_after(300):
        async with open_session(model, tmp_path / "loci.db", files=[path]) as session:
            return await session.agent.run(question)


async def test_who_wrote_a_module_finds_its_author_line(tmp_path: Path, gguf: Model) -> None:
    result = await ask(tmp_path, gguf, STDLIB / "uuid.py", "Who wrote the uuid module?")
    assert "Ka-Ping Yee" in result.answer and result.status == "done"
    assert [cited.start for cited in result.evidence] == [53]  # __author__ = 'Ka-Ping Yee <ping@zesty.ca>'


async def test_a_number_on_the_line_that_is_not_the_value_asked_is_never_done(tmp_path: Path, gguf: Model) -> None:
    result = await ask(tmp_path, gguf, STDLIB / "shutil.py", "What is the value of COPY_BUFSIZE?")
    assert not (result.status == "done" and "64 * 1024" not in result.answer)  # not "1024", done
    assert "64 * 1024" in result.answer


async def test_an_option_that_is_the_found_lines_own_span_is_done(tmp_path: Path, gguf: Model) -> None:
    manual = subprocess.run(["man", "-P", "cat", "ls"], capture_output=True, text=True, timeout=60, check=True)
    path = tmp_path / "ls.txt"
    path.write_text(manual.stdout, encoding="utf-8")
    result = await ask(tmp_path, gguf, path, "Which ls option sorts by file size, largest first?")
    assert (result.answer, result.status) == ("-S", "done")


async def test_a_72_line_module_is_shown_whole(tmp_path: Path, gguf: Model) -> None:
    path = STDLIB / "secrets.py"
    assert len(path.read_text(encoding="utf-8").splitlines()) == 72
    result = await ask(tmp_path, gguf, path, "What is DEFAULT_ENTROPY in the secrets module?")
    assert result.plan is not None and result.plan.mode == "whole"
    assert (result.answer, result.status) == ("32", "done")
