"""Words of a line, and lines ranked by a question's words: the one lexical ranker of the runtime.

Three readers rank lines by the words of a question: the run's look at its
documents (`runtime.reading.look`), the check that an answer stands on its lines
(`runtime.reading.answers`), and the long-document job's pre-pass
(`runtime.digest.lexical`). They all split and compare words here, so a fix
to one is a fix to all.

Words. Words are split and stemmed by `memory.text` (the one splitter and
the one stemmer): identifiers whole and in their parts (`DEFAULT_FORMAT`
gives `default_format`, `default` and `format`; `--sort-keys`, `os.path`,
`getLogger` likewise), case folded, abbreviations and British spellings to
the word, inflections to their lemma (lemminflect: "wrote" and "written"
meet "writes"), then Snowball's English stem ("sized" meets "size",
"licensed" "licence"). A line holds a question's term by its stem, by a
word the question's word is often said with ("wrote": `__author__`), or by
several of its words run together (`BUFSIZE`: "buffer size";
`memory.text.terms.Terms`). The question frame's stop words
(`fulltext.STOP_WORDS`, which memory recall drops too) are not content
words.

Ranking. `Ranker` is the one line ranker (`memory.text.lines`), BM25 over
lines: a word's weight is its inverse line frequency among the lines
counted (`log(1 + lines / lines with the word)`), a line scores the weights
of the distinct question words it holds, and a long line a little less
(the length norm, b = 0.5). `scan_lines` streams the
stored lines of documents that hold any of a set of words, a few hundred
chunks at a time, with the regular-expression engine passing over chunks
that hold none, so a ranking over every line of a long document stays
bounded in memory. `read_lines` reads a few lines by number (the lines
after a line found, where its value or the rest of its fact may be).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import TYPE_CHECKING

from loci.memory.context.fulltext import STOP_WORDS
from loci.memory.context.loader import split_lines
from loci.memory.text import Terms, stem, words
from loci.memory.text.lines import Ranker

if TYPE_CHECKING:
    import sqlite_utils

    from loci.memory.engines.sqlite.store import Store

__all__ = ["Ranker", "asked", "content_terms", "line_terms", "read_lines", "scan_lines", "terms_pattern"]

FETCH_ROWS = 256


def line_terms(text: str) -> set[str]:
    """The stemmed content words of `text` (whole identifiers and their parts), stop words left out."""
    return {stem(w) for w in words(text) if w not in STOP_WORDS}


def content_terms(question: str) -> list[str]:
    """The stemmed content words of a question, in order; all its words when only stop words are left."""
    every = words(question)
    kept = [w for w in every if w not in STOP_WORDS] or every
    return list(dict.fromkeys(stem(w) for w in kept))


def asked(terms: Iterable[str]) -> Terms:
    """A question's stemmed content words (`content_terms`) as the lines' side matches them, stop words aside."""
    return Terms(terms, ignore=STOP_WORDS)


def terms_pattern(terms: Iterable[str]) -> re.Pattern[str]:
    """Any word that starts with one of `terms` (stems), a form of one or a related word: a coarse filter
    that `Ranker.held` makes exact (`memory.text.terms.Terms.pattern`)."""
    return asked(terms).pattern()


async def scan_lines(
    store: Store, object_ids: Sequence[int], pattern: re.Pattern[str], totals: Ranker | None = None
) -> AsyncIterator[tuple[int, int, str]]:
    """The stored lines of the objects (by number) that `pattern` finds a match on, as `(index into
    object_ids, line number, text)`; with `totals`, every line's length is counted on it."""
    sql = (
        "SELECT seq, start_line, end_line, text FROM context_chunks"
        " WHERE object_id = ? AND seq >= ? ORDER BY seq LIMIT ?"
    )
    for index, number in enumerate(object_ids):
        seq = 0
        while True:
            rows = await store.read(lambda db, n=number, s=seq: _fetch(db, sql, [n, s, FETCH_ROWS]))
            for _, start_line, end_line, text in rows:
                if not pattern.search(text):  # the regex engine passes over most chunks whole
                    if totals is not None:
                        totals.count_lines(end_line - start_line + 1, len(text))
                    continue
                for offset, line in enumerate(split_lines(text)):
                    yield index, start_line + offset, line.rstrip("\n")
            if len(rows) < FETCH_ROWS:
                break
            seq = rows[-1][0] + 1


async def read_lines(store: Store, object_id: int, first: int, last: int) -> dict[int, str]:
    """Lines `first` to `last` of an object (by number), as stored, without their `\\n`: a line that two chunks
    share is joined."""
    sql = (
        "SELECT seq, start_line, end_line, text FROM context_chunks"
        " WHERE object_id = ? AND end_line >= ? AND start_line <= ? ORDER BY seq"
    )
    rows = await store.read(lambda db: _fetch(db, sql, [object_id, first, last]))
    lines: dict[int, str] = {}
    for _, start_line, _, text in rows:
        for offset, piece in enumerate(split_lines(text)):
            if first <= (number := start_line + offset) <= last:
                lines[number] = lines.get(number, "") + piece
    return {number: text.rstrip("\n") for number, text in sorted(lines.items())}


def _fetch(db: sqlite_utils.Database, sql: str, params: list[int]) -> list[tuple[int, int, int, str]]:
    return list(db.execute(sql, params).fetchall())
