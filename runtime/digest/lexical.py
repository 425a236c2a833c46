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
    found = await _best(store, objects, wanted, keep)
    if not found:
        return []
    bridge = line_words(found[0].text) - wanted
    if bridge:
        had = {(line.doc, line.line) for line in found}
        found += (await _best(store, objects, wanted | bridge, BRIDGED, need=(wanted, bridge), skip=had))[:BRIDGED]
    return found


async def _best(
    store: Store,
    objects: Sequence[ContextObject],
    wanted: set[str],
    keep: int,
    need: tuple[set[str], ...] = (),
    skip: frozenset[tuple[int, int]] | set[tuple[int, int]] = frozenset(),
) -> list[Found]:
    """The `keep` best lines by the rarity of the `wanted` words they hold (each holding a word of every
    set in `need`, none of the `(doc, line)` in `skip`), those under half of the best's score dropped."""
    seen: dict[str, int] = dict.fromkeys(wanted, 0)
    lines = 0
    async for _, _, text in _lines(store, objects):
        lines += 1
        for word in line_words(text) & wanted:
            seen[word] += 1
    weight = {word: math.log((lines + 1) / count) for word, count in seen.items() if count}
    best: list[tuple[float, int, int, str]] = []  # (score, -doc, -line, text): a min-heap, earlier lines first
    async for doc, number, text in _lines(store, objects):
        held = line_words(text) & wanted
        score = sum(weight.get(word, 0.0) for word in held)
        if score <= 0 or not all(held & words for words in need) or (doc, number) in skip:
            continue
        item = (round(score, 3), -doc, -number, text.strip()[:LINE_CHARS])
        if len(best) < keep:
            heapq.heappush(best, item)
        elif item > best[0]:
            heapq.heapreplace(best, item)
    ranked = sorted(best, reverse=True)
    floor = ranked[0][0] * RELATIVE_FLOOR if ranked else 0.0
    return [Found(-doc, -line, score, text) for score, doc, line, text in ranked if score >= floor]


async def _lines(store: Store, objects: Sequence[ContextObject]) -> AsyncIterator[tuple[int, int, str]]:
    """Every line of `objects` in order, as `(doc index, line number, text)`, a few hundred rows a read."""
    sql = "SELECT seq, start_line, text FROM context_chunks WHERE object_id = ? AND seq >= ? ORDER BY seq LIMIT ?"
    for doc, obj in enumerate(objects):
        number, seq = parse_id(obj.id)[1], 0
        while True:
            rows = await store.read(lambda db, n=number, s=seq: _fetch(db, sql, [n, s, FETCH_ROWS]))
            for _, start_line, text in rows:
                for offset, line in enumerate(split_lines(text)):
                    yield doc, start_line + offset, line
            if len(rows) < FETCH_ROWS:
                break
            seq = rows[-1][0] + 1


def _fetch(db: sqlite_utils.Database, sql: str, params: list[int]) -> list[tuple[int, int, str]]:
    return list(db.execute(sql, params).fetchall())
