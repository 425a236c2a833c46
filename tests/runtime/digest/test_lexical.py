"""The lexical pre-pass over a real context store: the lines that bear a question's content words."""

from __future__ import annotations

from pathlib import Path

from loci.memory.context.store import ContextStore
from loci.memory.engines.select import use_engine
from loci.memory.engines.sqlite.store import Store
from loci.runtime.digest.lexical import Found, content_words, scan


def filler(number: int) -> str:
    return f"line {number}: the code of this module opens files and reads them with care\n"


async def found_in(tmp_path: Path, text: str, question: str) -> list[tuple[int, str]]:
    path = tmp_path / "doc.txt"
    path.write_text(text, encoding="utf-8")
    async with await Store.open(tmp_path / "loci.db") as store:
        obj = await ContextStore(store, lambda t: len(t.split())).add_file(path)
        return [(line.line, line.text) for line in (await scan(store, [obj], question)).found]


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


async def test_a_value_folded_onto_the_next_line_is_read_as_part_of_the_found_line(tmp_path: Path) -> None:
    lines = [filler(n) for n in range(1, 200)]
    lines[99:99] = [
        "Comment: This is the pre-packaged Debian version of the zlib compression\n",
        " library.  It was packaged by Michael Alan Dorman <mdorman@debian.org>\n",
    ]
    found = await found_in(tmp_path, "".join(lines), "Who packaged zlib for Debian?")
    assert found[0] == (
        100,
        "Comment: This is the pre-packaged Debian version of the zlib compression"
        " library.  It was packaged by Michael Alan Dorman <mdorman@debian.org>",
    )


def copyright_records(n: int) -> str:
    return f"Files: src/part{n}/*\nCopyright: 20{n % 90:02d} Person Number{n} <p{n}@example.org>\nLicense: GPL-2\n\n"


async def test_the_field_that_completes_a_found_lines_record_is_found_with_it(tmp_path: Path) -> None:
    records = [copyright_records(n) for n in range(60)]
    records[30] = (
        "Upstream-Name: bzip2\nSource: http://www.bzip.org/\n\n"
        "Files: *\nCopyright: 1996-2010 Julian R Seward <jseward@bzip.org>\nLicense: BSD-variant\n\n"
    )
    path = tmp_path / "doc.txt"
    path.write_text("".join(records), encoding="utf-8")
    async with await Store.open(tmp_path / "loci.db") as store:
        obj = await ContextStore(store, lambda t: len(t.split())).add_file(path)
        found = (await scan(store, [obj], "Who holds the copyright of bzip2?")).found
    name = next(line for line in found if line.text == "Upstream-Name: bzip2")
    completed = [line for line in found if line.anchor == name.line]
    assert [(line.line - name.line, line.text) for line in completed] == [
        (4, "Copyright: 1996-2010 Julian R Seward <jseward@bzip.org>")
    ]


async def test_a_field_whose_value_only_holds_the_missing_word_completes_nothing(tmp_path: Path) -> None:
    records = [copyright_records(n) for n in range(60)]
    records[10] = "Upstream-Name: curl\nSource: https://curl.se/\n\n"
    records[40] = (
        "Files: url/*\nCopyright: 2013 The Chromium Authors. Use of this source code is governed by a BSD licence.\n\n"
    )
    path = tmp_path / "doc.txt"
    path.write_text("".join(records), encoding="utf-8")
    async with await Store.open(tmp_path / "loci.db") as store:
        obj = await ContextStore(store, lambda t: len(t.split())).add_file(path)
        scanned = await scan(store, [obj], "What is the source URL of curl?")
    assert "Files: url/*" in [line.text for line in scanned.found]
    assert [line for line in scanned.found if line.anchor is not None] == []
    assert scanned.counts["lines"] == len("".join(records).splitlines())


async def test_a_line_that_is_no_field_keeps_the_indented_lines_under_it_apart(tmp_path: Path) -> None:
    lines = [filler(n) for n in range(1, 200)]
    body = "    value = [self._get_value(action, v) for v in arg_strings]\n"
    lines[99:99] = ["The vault access code is 7341.\n", body]
    found = await found_in(tmp_path, "".join(lines), "What is the vault access code?")
    assert found == [(100, "The vault access code is 7341.")]


async def _scanned_on(db: str, path: Path, question: str) -> list[Found]:
    async with use_engine(db) as store:
        obj = await ContextStore(store, lambda t: len(t.split())).add_file(path)
        return (await scan(store, [obj], question)).found


async def test_the_scan_reads_on_and_completes_records_alike_on_both_engines(tmp_path: Path, postgres_url: str) -> None:
    records = [copyright_records(n) for n in range(60)]
    records[30] = (
        "Upstream-Name: bzip2\nComment: packaged for Debian from the bzip2 sources\n a folded line of the comment\n\n"
        "Files: *\nCopyright: 1996-2010 Julian R Seward <jseward@bzip.org>\nLicense: BSD-variant\n\n"
    )
    path = tmp_path / "doc.txt"
    path.write_text("".join(records), encoding="utf-8")
    question = "Who holds the copyright of bzip2?"
    on_sqlite = await _scanned_on(str(tmp_path / "loci.db"), path, question)
    assert "Copyright: 1996-2010 Julian R Seward <jseward@bzip.org>" in [line.text for line in on_sqlite]
    assert await _scanned_on(postgres_url, path, question) == on_sqlite
