"""Looking in the documents: the lines a search found, ranked by content words and shown whole.

Full-text search ranks chunks (`memory.context.fulltext`); an answer is on a
line. `best_lines` searches the task's content words only (the question
frame's stop words that memory recall drops, `memory.graph.terms`: "What",
"has", "the" rank nothing), reads the best chunks, and ranks their lines by
the content words each holds, a rare word counting more than a common one
(inverse line frequency among the lines read, words compared by a light
stem so "found" and "finds" meet) and a long line a little less (BM25's
length norm). `render_lines` shows the best lines
whole, each with its neighbouring lines (in a conversation the line before
is the question a turn answers, the line after its follow-up), as
`doc:1` headers over `N| text`, the form the prompt shows documents in, cut
to a token budget. `quote_lines` writes lines as a partial answer: quoted,
with their ids.

`Looked` is one run's record of the lines shown so far, so a repeated
search shows the next best hit instead of the same ones (`runtime.guard`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from memory.context.store import ContextStore
from memory.errors import UsageError
from memory.graph.terms import query_terms

__all__ = ["AROUND", "Line", "Looked", "best_lines", "quote_lines", "render_lines", "stem"]

CHUNKS = 6
AROUND = 1
_WORD = re.compile(r"[^\W_]+")
_SUFFIXES = ("ings", "ing", "ers", "ies", "ied", "es", "ed", "er", "s", "ly")


@dataclass(frozen=True)
class Line:
    id: str
    number: int
    text: str
    score: float


@dataclass
class Looked:
    """The lines a run has been shown, by (id, line number)."""

    shown: set[tuple[str, int]] = field(default_factory=set)

    def fresh(self, lines: list[Line]) -> list[Line]:
        return [line for line in lines if (line.id, line.number) not in self.shown]

    def add(self, lines: list[Line]) -> None:
        self.shown.update((line.id, line.number) for line in lines)


def stem(word: str) -> str:
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


async def best_lines(contexts: ContextStore, query: str, ids: list[str] | None, k: int = 8) -> list[Line]:
    """The `k` lines of the documents `ids` (all when None) that hold the most of the query's content words."""
    terms = {stem(word) for word in query_terms(query)}
    if not terms:
        return []
    try:
        hits = await contexts.search(" ".join(sorted(query_terms(query))), ids=ids, k=CHUNKS)
    except UsageError:
        return []
    lines: dict[tuple[str, int], str] = {}
    for hit in hits:
        span = await contexts.read(hit.id, hit.start_line, hit.end_line, max_tokens=4_000)
        for number, text in enumerate(span.text.split("\n"), start=span.start_line):
            lines[(hit.id, number)] = text
    found = {key: {stem(w) for w in _WORD.findall(text)} & terms for key, text in lines.items()}
    spread = {term: sum(term in words for words in found.values()) for term in terms}
    total = max(1, len(lines))
    average = sum(len(text) for text in lines.values()) / total + 1
    scored = [
        Line(key[0], key[1], text, sum(math.log(1 + total / spread[t]) for t in words) / _length(text, average))
        for key, words in found.items()
        if words and (text := lines[key])
    ]
    scored.sort(key=lambda line: -line.score)
    return scored[:k]


async def render_lines(
    contexts: ContextStore,
    lines: list[Line],
    budget: int,
    count: Callable[[str], int],
    around: int = AROUND,
    *,
    numbered: bool = True,
) -> tuple[str, list[Line]]:
    """The lines whole with `around` neighbours each, best first, within `budget` tokens; and the lines shown."""
    parts: list[str] = []
    shown: list[Line] = []
    covered: set[tuple[str, int]] = set()
    used = 0
    for line in lines:
        if (line.id, line.number) in covered:
            shown.append(line)
            continue
        obj = await contexts.get(line.id)
        first, last = max(1, line.number - around), min(obj.lines, line.number + around)
        span = await contexts.read(line.id, first, last, max_tokens=budget)
        shown_lines = [
            f"{n}| {text}" if numbered else text
            for n, text in enumerate(span.text.split("\n"), start=span.start_line)
            if (line.id, n) not in covered
        ]
        part = f"{line.id} lines {first}-{last}:\n" + "\n".join(shown_lines)
        tokens = count(part)
        if used + tokens > budget and parts:
            break
        parts.append(part)
        used += tokens
        shown.append(line)
        covered.update((line.id, n) for n in range(first, last + 1))
    return "\n\n".join(parts), shown


def _length(text: str, average: float) -> float:
    """BM25's length norm (b = 0.5): of two lines with the same words, the shorter says more about them."""
    return 0.5 + 0.5 * (len(text) + 1) / average


def quote_lines(lines: list[Line], most: int = 2) -> str:
    """Lines as an answer that quotes them: `doc:1:49: "text"` each."""
    return "\n".join(f'{line.id}:{line.number}: "{line.text.strip()}"' for line in lines[:most])
