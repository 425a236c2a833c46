"""The lexical pre-pass of `stream`: the lines that bear the question's content words.

A small model that rewrites its memory over every chunk of a long document
loses a fact stated on one line among thousands (it kept notes about
something else, and answered about that). Before the model reads anything,
`scan` ranks the lines by the question's content words with the runtime's
one lexical ranker (`memory.context.lexical`: stop words dropped, words
lightly stemmed, identifiers whole and in their parts, so `access_code` is
found as itself and as its two words; BM25 over lines).

Two passes over the stored text a round, no model: the first counts in how
many lines each word occurs, the second scores every line that holds one,
and keeps the best `keep` lines. A line whose score is under half of the
best is dropped, so a word found everywhere does not carry a line in.

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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from loci.memory.context.lexical import Ranker, content_terms, line_terms, scan_lines, terms_pattern
from loci.memory.context.objects import parse_id
from loci.memory.context.store import ContextObject
from loci.memory.engines.base import Engine

__all__ = ["Found", "content_words", "line_words", "scan"]

KEEP = 6
BRIDGED = 2
LINE_CHARS = 400
RELATIVE_FLOOR = 0.5


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


def line_words(text: str) -> set[str]:
    """The words of `text` as the scan compares them, stop words left out."""
    return line_terms(text)


def content_words(question: str) -> list[str]:
    """The question's content words, as the scan compares them, in order."""
    return content_terms(question)


async def scan(store: Engine, objects: Sequence[ContextObject], question: str, keep: int = KEEP) -> list[Found]:
    """The best lines for `question` in `objects`, best first, then the lines they bridge to; [] when
    no line holds a content word."""
    wanted = set(content_words(question))
    if not wanted:
        return []
    numbers = [parse_id(obj.id)[1] for obj in objects]
    ranker = await _counted(store, numbers, wanted)
    found = await _best(store, numbers, ranker, keep)
    if not found:
        return []
    bridge = line_words(found[0].text) - wanted
    if bridge:
        ranker = await _counted(store, numbers, wanted | bridge)
        had = {(line.doc, line.line) for line in found}
        found += await _best(store, numbers, ranker, BRIDGED, within=bridge, skip=had)
    return found


async def _counted(store: Engine, numbers: list[int], words: set[str]) -> Ranker:
    """The first pass: in how many lines each of `words` occurs, among every line."""
    ranker = Ranker(words)
    async for _, _, text in scan_lines(store, numbers, terms_pattern(words), ranker):
        ranker.count(text, ranker.held(text))
    return ranker


async def _best(
    store: Engine,
    numbers: list[int],
    ranker: Ranker,
    keep: int,
    *,
    within: set[str] | None = None,
    skip: set[tuple[int, int]] | None = None,
) -> list[Found]:
    """The `keep` best lines by the ranker's scores, those under half of the best's score dropped; with
    `within`, only the lines holding one of those and a question word, none in `skip`."""
    best: list[tuple[float, int, int, str]] = []  # (score, -doc, -line, text): a min-heap, earlier lines first
    async for doc, number, text in scan_lines(store, numbers, terms_pattern(within or ranker.terms)):
        held = ranker.held(text)
        if not held or (within and (not held & within or not held - within or (doc, number) in (skip or ()))):
            continue
        item = (round(ranker.score(text, held), 3), -doc, -number, text.strip()[:LINE_CHARS])
        if len(best) < keep:
            heapq.heappush(best, item)
        elif item > best[0]:
            heapq.heapreplace(best, item)
    ranked = sorted(best, reverse=True)
    floor = ranked[0][0] * RELATIVE_FLOOR if ranked else 0.0
    return [Found(-doc, -line, score, text) for score, doc, line, text in ranked if score >= floor]
