"""The one lexical ranker: identifiers as words, whole and in parts, and BM25 over a real store's lines."""

from __future__ import annotations

from pathlib import Path

from loci.memory.context.lexical import content_terms, line_terms, read_lines, words
from loci.memory.context.loader import CHUNK_CHARS
from loci.memory.context.objects import parse_id
from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.runtime.reading.look import Line, best_lines


def test_identifiers_are_words_whole_and_in_their_parts() -> None:
    assert words("DEFAULT_FORMAT = PAX_FORMAT") == ["default_format", "default", "format", "pax_format", "pax"] + [
        "format"
    ]
    assert words("use --sort-keys or os.path.") == ["use", "sort-keys", "sort", "keys", "or", "os.path", "os", "path"]
    assert {"smtp_port", "smtp", "port"} <= line_terms("SMTP_PORT = 25")
    assert "2.58" in line_terms("__version__ = '2.58'")


def test_a_questions_content_words_are_stemmed_the_same_way_as_a_lines() -> None:
    assert content_terms("Who keeps the keys?") == ["keep", "key"]
    assert content_terms("What is the value of DEFAULT_FORMAT in tarfile?")[:2] == ["valu", "default_format"]
    assert set(content_terms("What is the vault access code?")) <= line_terms("The vault access code is 7341.")


async def best_in(path: Path, lines: list[str], question: str, k: int) -> list[Line]:
    """The `k` best lines for `question` of a file of `lines` written at `path`, loaded in a home beside it."""
    path.write_text("".join(lines), encoding="utf-8")
    async with await Store.open(path.parent / "loci.db") as store:
        contexts = ContextStore(store, lambda t: len(t.split()))
        obj = await contexts.add_file(path)
        return await best_lines(contexts, question, [obj.id], k=k)


async def test_an_identifier_question_ranks_its_assignment_line_first(tmp_path: Path) -> None:
    lines = [f"# comment {n}: the default tar format and the pax format are described here\n" for n in range(300)]
    lines.insert(150, "DEFAULT_FORMAT = PAX_FORMAT\n")
    lines.insert(40, "from tarfile import *\n")
    found = await best_in(tmp_path / "tarfile.py", lines, "What is the value of DEFAULT_FORMAT in tarfile?", k=3)
    assert (found[0].number, found[0].text) == (152, "DEFAULT_FORMAT = PAX_FORMAT")


def test_irregular_verb_forms_meet_their_stem_and_plain_suffixes_still_do() -> None:
    assert content_terms("Who wrote the textwrap module?")[0] in line_terms("# Written by Greg Ward <gward@python.net>")
    assert line_terms("She writes, he wrote, it is written") == line_terms("write")
    assert content_terms("Who said it?") == content_terms("Who says it?")
    assert "port" in line_terms("ports") and "wrote" not in line_terms("wrote")


async def test_a_question_in_one_verb_form_finds_the_line_in_another(tmp_path: Path) -> None:
    lines = [f"# line {n}: wrapping and filling text paragraphs\n" for n in range(200)]
    lines.insert(5, "# Written by Greg Ward <gward@python.net>\n")
    lines.insert(120, '>>> textwrap.shorten("Hello  world!", width=12)\n')
    found = await best_in(tmp_path / "textwrap.py", lines, "Who wrote the textwrap module?", k=2)
    assert found[0].text.startswith("# Written by Greg Ward")


async def test_lines_are_read_by_number_a_line_two_chunks_share_read_whole(tmp_path: Path) -> None:
    lines = [f"line {n}\n" for n in range(1, 100)]
    lines[44] = "x" * (CHUNK_CHARS + 10) + " the end of a long line\n"  # line 45, longer than a chunk
    path = tmp_path / "doc.txt"
    path.write_text("".join(lines), encoding="utf-8")
    async with await Store.open(tmp_path / "loci.db") as store:
        obj = await ContextStore(store, lambda t: len(t.split())).add_file(path)
        read = await read_lines(store, parse_id(obj.id)[1], 39, 46)
    assert list(read) == list(range(39, 47))
    assert read[40] == "line 40" and read[45] == lines[44].rstrip("\n") and read[46] == "line 46"
