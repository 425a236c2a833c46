"""Full-text search over chunks: BM25 on either engine, and every query taken literally.

The model writes queries, and a query is words, not FTS5 syntax: each word
is quoted (`fts_literal`), so `NEAR(`, `*`, `-` or an unbalanced quote are
searched as text and can never raise a syntax error. The words are OR-ed and
ranked by BM25, so a query with one rare word and three common ones still
finds the rare one. `query_words` is the one place a query is split into
words: context search uses them all, memory recall (memory/graph/recall.py) keeps
the informative ones.

Searches weigh content words: the words that frame a question ("what", "has",
"the": `STOP_WORDS`, which memory recall drops too, memory/graph/terms.py) are
left out of the match unless nothing else is left, so they never rank a line.
A hit carries its best line whole (`line_text`), which a reader needs more than
a snippet of bracketed matches.

The index is FTS5 on SQLite and a `tsvector` of the same words on
PostgreSQL, one module each (memory/context/index/), chosen by the engine's
dialect; both rank by FTS5's BM25 over the same words, so a store on either
engine answers a search with the same chunks in the same order. A hit names
its chunk's line range and its line that holds the rarest query words, so
the next step can read just there.

Documents come first: a run's own records (`obs:N` search results, `turn:N`,
`note:N`) match the words of the lines they quote, and would otherwise
outrank the document itself. So the matches are ranked documents first, each
kind by BM25, and a record whose best line is a line of a document hit (a
copy of what it quoted, `12| ` prefixes and quotes aside) is not returned.

A search sees the objects of one project, or of every project for `ALL`
(`memory.projects`): the match is joined to its objects, which say theirs.

Regular expressions take another path (`memory.context.regex_scan`): FTS5 cannot
run them, and they must be bounded in time.
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

from loci.memory.context.index import postgres, sqlite
from loci.memory.context.loader import split_lines
from loci.memory.context.objects import Hit
from loci.memory.engines.dialects import dialect_of
from loci.memory.text.lines import Ranker
from loci.memory.text.stops import STOP_WORDS
from loci.memory.text.tokens import query_words, tokens, word_tokens

__all__ = ["STOP_WORDS", "chunk_index", "content_words", "fts_literal", "fts_phrase", "fts_search"]

SNIPPET_TOKENS = 16
LINE_CHARS = 600
RECORD_ROOM = 8  # rows beyond k, so that records dropped as copies leave k hits
_QUOTING = re.compile(r"^\s*(?:\w+:\d+(?::\d+)?:?\s*|\d+\|\s*)")  # `doc:1:49: ` or `12| ` before a line


def content_words(query: str) -> list[str]:
    """The query's words without the stop words, or all of them when only stop words are left."""
    words = query_words(query)
    return [w for w in words if w.casefold() not in STOP_WORDS] or words


def fts_phrase(text: str) -> str:
    """`text` as one quoted FTS5 string: its FTS syntax (`NEAR(`, `*`, quotes) is searched literally."""
    return '"' + text.replace('"', '""') + '"'


def fts_literal(query: str | list[str]) -> str:
    """Any of the query's words (or of the words given), each quoted, so FTS5 syntax is searched literally;
    empty when there is no word."""
    words = query_words(query) if isinstance(query, str) else query
    return " OR ".join(fts_phrase(w) for w in words)


def chunk_index(conn: Any) -> ModuleType:
    """The full-text index module (memory/context/index/) of the engine `conn` belongs to."""
    return dialect_of(conn).pick(sqlite=sqlite, postgresql=postgres)


def fts_search(db: Any, query: str, refs: list[str] | None, k: int, *, project: str | None) -> list[Hit]:
    """The best `k` chunks for `query` in the objects of `project` (ALL: of every project),
    optionally among the objects `refs` (ids such as doc:3), on the engine `db` belongs to."""
    words = content_words(query)
    phrases = [[word for word, _, _ in word_tokens(w)] for w in words]
    rows = chunk_index(db).matches(db, fts_literal(words), phrases, refs, k + RECORD_ROOM, SNIPPET_TOKENS, project)
    hits: list[Hit] = []
    quoted: list[str] = []  # the text of the document hits, flattened
    for kind, oid, first, last, text, snippet, score in rows:
        line = _best_line(text, first, words)
        whole = split_lines(text)[line - first].rstrip("\n") if line - first < len(split_lines(text)) else ""
        if kind == "doc":
            quoted.append(_flat(text))
        elif (flat := _flat(_QUOTING.sub("", whole))) and any(flat in doc for doc in quoted):
            continue  # a record of a run that only repeats a document's line
        hits.append(Hit(f"{kind}:{oid}", first, last, snippet, score, line, whole[:LINE_CHARS]))
    return hits[:k]


def _flat(text: str) -> str:
    return " ".join(tokens(text))


def _best_line(text: str, first: int, words: list[str]) -> int:
    """The line of a chunk that best matches the query: the one line ranker's BM25 over the chunk's lines, by
    the index's own words (rare query words count more than common ones), a line's length aside."""
    wanted = {token for word in words for token in tokens(word)}
    best = Ranker(wanted, holds=lambda line: set(tokens(line)) & wanted, b=0.0).best(split_lines(text))
    return first + (best or 0)
