"""The lexical pre-pass of `stream`: the lines that bear the question's content words.

A small model that rewrites its memory over every chunk of a long document
loses a fact stated on one line among thousands (it kept notes about
something else, and answered about that). Before the model reads anything,
`scan` ranks the lines by the question's content words with the one line
ranker (`memory.text.lines.Ranker`, BM25 over lines, through
`memory.context.lexical`: the one splitter and stemmer, stop words dropped,
identifiers whole and in their parts, so `access_code` is found as itself
and as its two words).

Two passes over the stored text a round, no model: the first counts in how
many lines each word occurs, the second scores every line that holds one,
and keeps the best `keep` lines. A line whose score is under half of the
best is dropped, so a word found everywhere does not carry a line in.

A found line is read with the lines after it (`NEAR_LINES`), where what it
names may be stated:

- its block: when it is a field (`key: value`, `key = value`:
  `runtime.reading.fields.field`), the lines right after it indented
  deeper (`runtime.reading.answers.under`) are the rest of its value,
  unfolded onto it as one line (while it stays within `BLOCK_CHARS`), so a
  value folded onto the next line is on the found line (`Comment: This is
  the pre-packaged Debian Linux version of the zlib compression`, then
  ` library.  It was packaged by Michael Alan Dorman`); a sentence above a
  function's indented body is a line of its own;
- its record: the best line of the next few that is a field (`key:
  value`) whose key is a word of the question the found line lacks is
  found too, with the found line as its `anchor` ("Upstream-Name: bzip2",
  then "Copyright: 1996-2010 Julian R Seward" four lines on, asked who
  holds bzip2's copyright).

A fact may also need a line far away ("Velmora keeps the key to the amber
vault"; "the amber vault is in Tarnhollow"): the best line's own words (not
the question's) bridge to it. A second round looks for the lines that hold
one of them and a word of the question, and the best `BRIDGED` join the
found lines.
Memory stays bounded: counts per word and `keep` lines, whatever the length.

A `Found` line's score is the first round's (the question's words, the
anchor's with them); the first round's counts (`Scan.counts`) go with the
lines, so the choice of an answer among them (`runtime.digest.choice`)
weighs each word by how many lines of the whole document hold it. `Found`
lines are what `stream` shows the model when it answers and quotes as
evidence, and which chunks it reads with the model.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loci.memory.context.lexical import content_terms, line_terms, read_lines, scan_lines, terms_pattern
from loci.memory.context.objects import parse_id
from loci.memory.context.store import ContextObject
from loci.memory.engines.base import Engine
from loci.memory.text import Ranker
from loci.runtime.reading.answers import under
from loci.runtime.reading.fields import field as key_value

__all__ = ["Found", "Scan", "content_words", "line_words", "scan"]

KEEP = 6
BRIDGED = 2
LINE_CHARS = 400
BLOCK_CHARS = 300  # a found line with its block, at most (what the answer may quote of it)
RELATIVE_FLOOR = 0.5
NEAR_LINES = 6  # the lines after a found line read with it: its block, and the rest of its record


@dataclass(frozen=True)
class Found:
    """Line `line` of document `doc` (an index into the job's objects), its score and its text (with its block);
    `anchor`, the line before it whose question words it completes, if any."""

    doc: int
    line: int
    score: float
    text: str
    anchor: int | None = None

    def as_json(self) -> list[Any]:
        return [self.doc, self.line, self.score, self.text, *([] if self.anchor is None else [self.anchor])]

    @classmethod
    def from_json(cls, value: Sequence[Any]) -> Found:
        anchor = int(value[4]) if len(value) > 4 and value[4] is not None else None
        return cls(int(value[0]), int(value[1]), float(value[2]), str(value[3]), anchor)


@dataclass
class Scan:
    """The found lines, best first, and the first round's counts over every line (`Ranker`'s)."""

    found: list[Found]
    counts: dict[str, Any] = field(default_factory=dict)


def line_words(text: str) -> set[str]:
    """The words of `text` as the scan compares them, stop words left out."""
    return line_terms(text)


def content_words(question: str) -> list[str]:
    """The question's content words, as the scan compares them, in order."""
    return content_terms(question)


async def scan(store: Engine, objects: Sequence[ContextObject], question: str, keep: int = KEEP) -> Scan:
    """The best lines for `question` in `objects`, best first, each with its block; then the lines that complete
    their records, and the lines they bridge to; no line when none holds a content word."""
    wanted = set(content_words(question))
    if not wanted:
        return Scan([])
    numbers = [parse_id(obj.id)[1] for obj in objects]
    ranker = await _counted(store, numbers, wanted)
    counts = ranker.counts()
    found = await _best(store, numbers, ranker, keep)
    if not found:
        return Scan([], counts)
    found, near = await _read_on(store, numbers, ranker, found)
    bridge = line_words(found[0].text) - wanted
    if bridge:
        second = await _counted(store, numbers, wanted | bridge)
        had = {(line.doc, line.line) for line in found + near}
        bridged = await _best(store, numbers, second, BRIDGED, within=bridge, skip=had)
        near += [_rescored(line, ranker) for line in bridged]
    return Scan(found + near, counts)


def _rescored(line: Found, ranker: Ranker) -> Found:
    """`line` scored by the first round's ranker: the question's words it holds."""
    score = round(ranker.score(line.text, ranker.held(line.text)), 3)
    return Found(line.doc, line.line, score, line.text, line.anchor)


async def _read_on(
    store: Engine, numbers: list[int], ranker: Ranker, found: list[Found]
) -> tuple[list[Found], list[Found]]:
    """The found lines with their blocks, and the line that completes each one's record (see the module)."""
    with_blocks: list[Found] = []
    near: list[Found] = []
    taken = {(line.doc, line.line) for line in found}
    for line in found:
        read = await read_lines(store, numbers[line.doc], line.line, line.line + NEAR_LINES)
        texts = [read.pop(line.line, line.text), *read.values()]  # the line as stored: its indent counts
        lines = [line.line, *read]
        inside = under(texts, lines, 0, NEAR_LINES) if key_value(texts[0]) is not None else []
        text = _unfolded([texts[0], *(texts[i] for i in inside)])
        with_blocks.append(Found(line.doc, line.line, line.score, text))
        held = ranker.held(text)
        rest = [
            (round(ranker.score(texts[i], ranker.held(texts[i]) | held), 3), -lines[i], texts[i].strip())
            for i in range(max(inside, default=0) + 1, len(texts))
            if (line.doc, lines[i]) not in taken and _completes(texts[i], held, ranker)
        ]
        if rest:
            score, number, text = max(rest)
            taken.add((line.doc, -number))
            near.append(Found(line.doc, -number, score, text[:LINE_CHARS], anchor=line.line))
    return with_blocks, near


def _unfolded(block: list[str]) -> str:
    """A line and the lines of its block as one line, as a folded field is read, the block's lines taken while the
    whole stays within `BLOCK_CHARS` (a long first line cut to `LINE_CHARS`)."""
    text = block[0].strip()[:LINE_CHARS]
    for line in block[1:]:
        if len(text) + 1 + len(line.strip()) > BLOCK_CHARS:
            break
        text = f"{text} {line.strip()}"
    return text


def _completes(text: str, held: set[str], ranker: Ranker) -> bool:
    """Whether `text` is a field (`key: value`, `runtime.reading.fields.field`) whose key holds a word of the
    question that `held` lacks: `Copyright: 1996-2010 Julian R Seward` after `Upstream-Name: bzip2`, asked who holds
    bzip2's copyright (not `Copyright: ... Use of this source code ...` after `Files: url/*`, asked for curl's
    source URL: "source" is in its value, not its key)."""
    shaped = key_value(text)
    return shaped is not None and bool(ranker.held(shaped[0]) - held)


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
