"""The index tokenizer: the words FTS5's `unicode61` tokenizer sees, for every index and every query of them.

SQLite indexes the context store's chunks with FTS5 (`unicode61`): a word
(`TOKEN`) is a run of letters and digits, case folded, its diacritics
removed (`fold`), never stemmed; `_`, `-` and `.` separate words, so
`default_format` is the two words `default format`. PostgreSQL's chunk index
is built from the same words (`memory.context.index.words.tsvector_text`),
so both engines hold the same words at the same places.

A query is split by `query_words`: runs of letters, digits, `_` and `-`
(`default_format`, `x-ray`), each searched as the phrase of its tokens, on
the context index and the memory graph's alike.

Standard library only: the hook process splits queries through this.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["TOKEN", "Word", "fold", "query_words", "tokens", "word_tokens"]

TOKEN = re.compile(r"[^\W_]+")
_QUERY_RUN = re.compile(r"[\w-]+")

Word = tuple[str, int, int]  # a word folded, and where it starts and ends in the text (character offsets)


def fold(word: str) -> str:
    """`word` case folded, its diacritics removed, as `unicode61` folds it."""
    lowered = word.lower()
    if lowered.isascii():
        return lowered
    return "".join(c for c in unicodedata.normalize("NFD", lowered) if not unicodedata.combining(c))


def tokens(text: str) -> list[str]:
    """The words of `text` in order, each folded, as `unicode61` indexes them."""
    if text.isascii():
        return TOKEN.findall(text.lower())
    return [fold(word) for word in TOKEN.findall(text)]


def word_tokens(text: str) -> list[Word]:
    """The words of `text` in order, each folded, with where it is."""
    if text.isascii():  # folding keeps every offset: fold the text once
        return [(m.group(), m.start(), m.end()) for m in TOKEN.finditer(text.lower())]
    return [(fold(m.group()), m.start(), m.end()) for m in TOKEN.finditer(text)]


def query_words(query: str) -> list[str]:
    """The distinct searchable words of a query, in order: runs of letters, digits, `_` and `-`,
    without a leading or trailing `-` or `_`."""
    return list(dict.fromkeys(word for run in _QUERY_RUN.findall(query) if (word := run.strip("-_"))))
