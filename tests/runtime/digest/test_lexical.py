"""The lexical pre-pass over a real context store: the lines that bear a question's content words."""

from __future__ import annotations

from pathlib import Path

from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.runtime.digest.lexical import content_words, scan


def filler(number: int) -> str:
    return f"line {number}: the code of this module opens files and reads them with care\n"


async def found_in(tmp_path: Path, text: str, question: str) -> list[tuple[int, str]]:
    path = tmp_path / "doc.txt"
    path.write_text(text, encoding="utf-8")
    async with await Store.open(tmp_path / "loci.db") as store:
        obj = await ContextStore(store, lambda t: len(t.split())).add_file(path)
        return [(line.line, line.text) for line in await scan(store, [obj], question)]


def test_content_words_drop_the_question_frame_and_plurals() -> None:
    assert content_words("What is the vault access code?") == ["vault", "access", "code"]
    assert content_words("Who keeps the keys?") == ["keep", "key"]


async def test_the_line_with_the_rare_words_is_found_and_common_ones_do_not_carry_a_line(tmp_path: Path) -> None:
    lines = [filler(n) for n in range(1, 400)]
    lines.insert(249, "The vault access code is 7341.\n")
    found = await found_in(tmp_path, "".join(lines), "What is the vault access code?")
    assert found == [(250, "The vault access code is 7341.")]  # 399 lines with "code" fall under the floor


async def test_a_second_line_is_found_through_the_words_of_the_first(tmp_path: Path) -> None:
    lines = [filler(n) for n in range(1, 300)]
    lines.insert(99, "Velmora Quist keeps the key to the amber vault.\n")
    lines.insert(199, "The amber vault is in the city of Tarnhollow.\n")
    found = await found_in(tmp_path, "".join(lines), "In which city is the room whose key Velmora Quist keeps?")
    assert [number for number, _ in found] == [100, 200]


async def test_no_line_with_a_content_word_finds_nothing(tmp_path: Path) -> None:
    text = "".join(filler(n) for n in range(1, 50))
    assert await found_in(tmp_path, text, "Where is the lighthouse?") == []
