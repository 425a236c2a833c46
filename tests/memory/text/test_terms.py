"""The one splitter and stemmer: a question's words met in the forms a line writes them."""

from __future__ import annotations

from loci.memory.context.lexical import asked, content_terms
from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.text import Terms, stem, words
from loci.memory.text.terms import RELATED_MARK
from loci.runtime.reading.look import best_lines


def test_identifiers_split_at_joiners_and_camel_case_and_stay_whole() -> None:
    assert words("getLogger(HTTPServer)") == ["getlogger", "get", "logger", "httpserver", "http", "server"]
    assert words("x86_64 v2.58") == ["x86_64", "x86", "64", "v2.58", "v2", "58"]


def test_the_forms_of_a_word_meet_on_one_stem() -> None:
    assert {stem(w) for w in ("wrote", "written", "writes", "Write")} == {stem("write")}
    assert {stem(w) for w in ("licence", "licensed", "licenses")} == {stem("license")}
    assert stem("sized") == stem("sizes") == stem("size") and stem("children") == stem("child")
    assert stem("buf") == stem("buffer") and stem("max") == stem("maximum")
    assert stem("COPY_BUFSIZE") == "copy_bufsize"  # an identifier is compared as it is


def test_a_word_run_together_holds_the_question_words_it_is_made_of() -> None:
    assert asked(content_terms("What is the copy buffer size?")).held("COPY_BUFSIZE = 64 * 1024") == {
        stem("copy"),
        stem("buffer"),
        stem("size"),
    }
    assert asked(content_terms("What is the maximum line length?")).held("_MAXLINE = 65536") >= {stem("line")}
    assert not asked(content_terms("What is the buffer size?")).held("bufferedreader = None")


def test_a_line_holds_the_word_it_says_instead_of_the_questions() -> None:
    who = asked(content_terms("Who wrote the uuid module?"))
    assert who.held("__author__ = 'Ka-Ping Yee <ping@zesty.ca>'") == {RELATED_MARK + stem("write")}
    assert Terms([stem("exception")]).held("raise CalledProcessError") == {RELATED_MARK + stem("exception")}


async def test_a_questions_own_word_outranks_the_many_lines_of_a_related_one(store: Store) -> None:
    # asked for bz2's author: `__author__` says the word; the shortest of many `write` lines said only a related one
    contexts = ContextStore(store)
    lines = ['__author__ = "Nadeem Vawda"', "_MODE_WRITE = 3", *[f"    def write(self, data{n}):" for n in range(9)]]
    doc = await contexts.add_text("doc", "bz2.py", "\n".join(lines))
    assert [line.number for line in await best_lines(contexts, "author of bz2.py?", [doc.id], k=1)] == [1]


def test_an_e_mail_addresss_domain_is_not_what_its_line_is_about() -> None:
    debian = asked(content_terms("Who first made the package for Debian?"))
    assert debian.held("Copyright 2008-2011 Niko Tyni <ntyni@debian.org>") == set()
    # "initially" is held as related to "first" (`RELATED`), a term of its own
    assert debian.held("initially debianized by Brendan O'Dea <bod@debian.org>") == {stem("debian"), "~first"}
    assert asked(content_terms("Who reads util-linux mail?")).held("util-linux@vger.kernel.org") >= {stem("util")}


def test_the_coarse_pattern_finds_every_form_the_terms_are_held_by() -> None:
    pattern = asked(content_terms("Who wrote the licence of the copy buffer?")).pattern()
    for line in ("it was written", "Licensed under", "the licence", "COPY_BUFSIZE", "__author__", "wrote it"):
        assert pattern.search(line), line
    assert not pattern.search("nothing of the kind here")
