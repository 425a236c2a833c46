"""The lexical pre-pass of `stream`: the lines that bear the question's content words.

A small model that rewrites its memory over every chunk of a long document
loses a fact stated on one line among thousands (it kept notes about
something else, and answered about that). Before the model reads anything,
`scan` looks for the lines that carry the question's content words: the
question's words less the stop words that memory recall drops
(`memory.graph.terms.query_terms`), each matched loosely (case folded, a
plural `s` dropped; `access_code` is two words).

Two passes over the stored text a round, no model: the first counts in how many
lines each word occurs, the second scores every line by the rarity of the
words it holds (`log(lines / lines with the word)`, summed over the distinct
words), and keeps the best `keep` lines. A line whose score is under half of
the best is dropped, so a word found everywhere does not carry a line in.

A fact may need a second line ("Velmora keeps the key to the amber
vault"; "the amber vault is in Tarnhollow"): the best line's own words (not
the question's) bridge to it. A second round looks for the lines that hold
one of them and a word of the question, and the best `BRIDGED` join the
found lines.
Memory stays bounded: counts per word and `keep` lines, whatever the length.

`Found` lines are what `stream` shows the model when it answers and quotes
as evidence, and which chunks it reads with the model.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from memory.context.loader import split_lines
from memory.context.store import ContextObject, parse_id
from memory.graph.terms import STOP_WORDS, query_terms
from memory.store import Store

__all__ = ["Found", "content_words", "line_words", "scan"]

KEEP = 6
BRIDGED = 2
LINE_CHARS = 400
RELATIVE_FLOOR = 0.5
FETCH_ROWS = 256
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Found:
    """Line `line` of document `doc` (an index into the job's objects), its score and its text."""

    doc: int
    line: int
    score: float
    text: str

    def as_json(self) -> list[Any]:
        return [self.doc, self.line, self.score, self.text]

    @classmethod
    def from_json(cls, value: Sequence[Any]) -> Found:
        return cls(int(value[0]), int(value[1]), float(value[2]), str(value[3]))


def _normal(word: str) -> str:
    """Case folded, a plural `s` dropped."""
    word = word.casefold()
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def line_words(text: str) -> set[str]:
    """The words of `text` as the scan compares them, stop words left out."""
    return {_normal(w) for w in _WORD.findall(text) if w.casefold() not in STOP_WORDS}


def content_words(question: str) -> list[str]:
    """The question's content words, normalised, in order (stop words dropped, as recall drops them)."""
    return list(dict.fromkeys(_normal(w) for term in query_terms(question) for w in _WORD.findall(term)))


async def scan(store: Store, objects: Sequence[ContextObject], question: str, keep: int = KEEP) -> list[Found]:
    """The best lines for `question` in `objects`, best first, then the lines they bridge to; [] when
    no line holds a content word."""
    wanted = set(content_words(question))
    if not wanted:
        return []
    weight = await _weights(store, objects, wanted)
    found = await _best(store, objects, wanted, weight, keep)
    if not found:
        return []
    bridge = line_words(found[0].text) - wanted
    if bridge:
        weight |= await _weights(store, objects, bridge)
        had = {(line.doc, line.line) for line in found}
        found += await _best(store, objects, wanted | bridge, weight, BRIDGED, within=bridge, skip=had)
    return found


async def _weights(store: Store, objects: Sequence[ContextObject], words: set[str]) -> dict[str, float]:
    """How rare each of `words` is: `log(lines / lines holding it)`; a word on no line has none."""
    seen: dict[str, int] = dict.fromkeys(words, 0)
    total = [0]
    async for _, _, _, held in _hits(store, objects, words, total):
        for word in held:
            seen[word] += 1
    return {word: math.log((total[0] + 1) / count) for word, count in seen.items() if count}


async def _best(
    store: Store,
    objects: Sequence[ContextObject],
    wanted: set[str],
    weight: dict[str, float],
    keep: int,
    *,
    within: set[str] | None = None,
    skip: set[tuple[int, int]] | None = None,
) -> list[Found]:
    """The `keep` best lines by the weights of the `wanted` words they hold, those under half of the best's
    score dropped; with `within`, only the lines holding one of those and a question word, none in `skip`."""
    best: list[tuple[float, int, int, str]] = []  # (score, -doc, -line, text): a min-heap, earlier lines first
    async for doc, number, text, held in _hits(store, objects, wanted, [0], within):
        if within and (not held - within or (doc, number) in (skip or ())):
            continue
        item = (round(sum(weight.get(word, 0.0) for word in held), 3), -doc, -number, text.strip()[:LINE_CHARS])
        if len(best) < keep:
            heapq.heappush(best, item)
        elif item > best[0]:
            heapq.heapreplace(best, item)
    ranked = sorted(best, reverse=True)
    floor = ranked[0][0] * RELATIVE_FLOOR if ranked else 0.0
    return [Found(-doc, -line, score, text) for score, doc, line, text in ranked if score >= floor]


def _pattern(words: set[str]) -> re.Pattern[str]:
    """Any of `words` as a whole word, a plural `s` allowed: the scan's words, found by the regex engine."""
    alternatives = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![^\W_])(?:{alternatives})s?(?![^\W_])", re.IGNORECASE)


async def _hits(
    store: Store,
    objects: Sequence[ContextObject],
    words: set[str],
    total: list[int],
    within: set[str] | None = None,
) -> AsyncIterator[tuple[int, int, str, set[str]]]:
    """The lines of `objects` holding one of `words` (with `within`: one of those), as `(doc index, line
    number, text, words held)`, read a few hundred stored chunks at a time; `total[0]` counts every line."""
    sql = (
        "SELECT seq, start_line, end_line, text FROM context_chunks"
        " WHERE object_id = ? AND seq >= ? ORDER BY seq LIMIT ?"
    )
    first, every = _pattern(within or words), _pattern(words)
    for doc, obj in enumerate(objects):
        number, seq = parse_id(obj.id)[1], 0
        while True:
            rows = await store.read(lambda db, n=number, s=seq: _fetch(db, sql, [n, s, FETCH_ROWS]))
            for _, start_line, end_line, text in rows:
                total[0] += end_line - start_line + 1
                if not first.search(text):  # the regex engine passes over most chunks whole
                    continue
                for offset, line in enumerate(split_lines(text)):
                    if within and not first.search(line):
                        continue
                    if held := {_normal(word) for word in every.findall(line)} & words:
                        yield doc, start_line + offset, line, held
            if len(rows) < FETCH_ROWS:
                break
            seq = rows[-1][0] + 1


def _fetch(db: sqlite_utils.Database, sql: str, params: list[int]) -> list[tuple[int, int, int, str]]:
    return list(db.execute(sql, params).fetchall())
