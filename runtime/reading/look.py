"""Looking in the documents: the lines that hold a question's words, ranked as plain BM25 ranks them, shown whole.

An answer is on a line. `best_lines` ranks every line of the documents by the
question's content words (`memory.context.lexical`, the one lexical ranker:
identifiers count whole and in their parts, `DEFAULT_FORMAT` and `default`,
words compared by a light stem, the question frame's stop words rank
nothing) with BM25 over lines: a rare word counts more than a common one, a
long line a little less. It streams the stored lines of the documents, so
it sees every line a plain lexical ranking of the file would, however long
the file. In a Debian copyright file (the machine-readable format's
`Files:` paragraphs), a line in a paragraph about other files than the
package's own (`Files: reftable/*`, not `Files: *`), or in a paragraph that
gives a licence's text (`License: Apache-2.0` heading one), counts
`OTHER_FILES` as much, unless the question names those files or that licence: "Who holds the copyright of
git?" is asked of `Files: *`'s `Copyright: © 2005-2022, Linus Torvalds`,
not the shorter `Copyright: © 2020 Google LLC` of `Files: reftable/*`.

`render_lines` shows the best lines whole and numbered (`N| text`, the form
the prompt shows documents in), under a `doc:1` header per document, in the
order of the document. It first takes the best lines themselves, best first,
while they fit the room, so what a plain retrieval of the top lines would
show is always there; then their neighbours, up to a smaller total (`fill`:
each token shown is a token a small model evaluates on a CPU) (in a
conversation the line before is the question a turn answers, the line after
its follow-up), cut to a token budget. `quote_lines` writes lines as a
partial answer: quoted, with their ids.

`Looked` is one run's record of the lines shown so far, so a repeated
search shows the next best hit instead of the same ones (`runtime.loop.guard`).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from loci.memory.context.lexical import Ranker, content_terms, line_terms, scan_lines, terms_pattern
from loci.memory.context.objects import parse_id
from loci.memory.context.store import ContextStore
from loci.memory.errors import UsageError
from loci.runtime.prompt.build import fit
from loci.runtime.prompt.shown import Lines, ShownLine
from loci.runtime.reading.answers import BLOCK_LINES, deeper, under

__all__ = ["AROUND", "Line", "Looked", "best_lines", "quote_lines", "render_lines", "show_lines"]

AROUND = 1
OTHER_FILES = 0.5  # a line's weight in a copyright file's paragraph about files the question does not name
# a machine-readable Debian copyright file's paragraph about some files, or a paragraph giving a licence's text
_FILES = re.compile(r"^(?:Files|(License)):[ \t]*(.*)$")
HEADER_TOKENS = 12  # a document's `doc:1 lines 3-40:` header


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


async def best_lines(contexts: ContextStore, query: str, ids: list[str] | None, k: int = 8) -> list[Line]:
    """The `k` lines of the documents `ids` (all when None) that rank best for the query's content words."""
    terms = set(content_terms(query))
    if not terms:
        return []
    if ids is None:
        ids = [obj.id for obj in await contexts.list(["doc"])]
    refs: dict[int, str] = {}
    for ref in ids:
        try:
            refs[parse_id(ref)[1]] = ref
        except UsageError:
            continue
    numbers = list(refs)
    ranker = Ranker(terms)
    pattern = terms_pattern(terms)
    pattern = re.compile(f"(?:{pattern.pattern})|^(?:Files|License):", pattern.flags | re.MULTILINE)
    held: list[tuple[int, int, str, set[str], float]] = []
    paragraphs: dict[int, tuple[int, str | None]] = {}  # a document's last line seen, and its `Files:` paragraph
    async for index, number, text in scan_lines(contexts.store, numbers, pattern, ranker):
        last, files = paragraphs.get(index, (0, None))
        files = None if number != last + 1 or not text.strip() else files
        if (header := _FILES.match(text)) and (files is None or not header.group(1)):
            files = f"{header.group(1) or ''} {header.group(2)}"  # a licence's own paragraph: `License GPL-2`
        paragraphs[index] = (number, files)
        found = ranker.held(text)
        ranker.count(text, found)
        if found:
            held.append((index, number, text, found, _weight(files, terms)))
    best = heapq.nlargest(k, held, key=lambda h: (ranker.score(h[2], h[3]) * h[4], -h[0], -h[1]))
    return [Line(refs[numbers[i]], number, text, ranker.score(text, found) * w) for i, number, text, found, w in best]


def _weight(files: str | None, terms: set[str]) -> float:
    """`OTHER_FILES` for a line in a copyright file's paragraph about files other than the package's own, or
    giving a licence's text, that the question does not name (`Files: reftable/*`, `License GPL-2`), else 1."""
    if files is None or files.strip() == "*" or line_terms(files) & terms:
        return 1.0
    return OTHER_FILES


async def render_lines(
    contexts: ContextStore,
    lines: list[Line],
    budget: int,
    count: Callable[[str], int],
    around: int = AROUND,
    *,
    numbered: bool = True,
    fill: int | None = None,
) -> tuple[str, list[Line]]:
    """`show_lines`' lines as the prompt's text, and the lines shown."""
    shown, found = await show_lines(contexts, lines, budget, count, around, numbered=numbered, fill=fill)
    return shown.text, found


async def show_lines(
    contexts: ContextStore,
    lines: list[Line],
    budget: int,
    count: Callable[[str], int],
    around: int = AROUND,
    *,
    numbered: bool = True,
    fill: int | None = None,
) -> tuple[Lines, list[Line]]:
    """The lines whole within `budget` tokens: the lines themselves best first while they fit, then their
    neighbours (`around` each side, nearest first) while the total is within `fill` (default: `budget`);
    and the lines shown."""
    fill = budget if fill is None else min(fill, budget)
    chosen: dict[str, dict[int, str]] = {}
    shown: list[Line] = []
    used = 0
    for line in lines:
        held = chosen.setdefault(line.id, {})
        if line.number not in held:
            text = line.text if shown else fit(line.text, budget, count)[0]
            cost = count(_row(line.number, text, numbered)) + (0 if held else HEADER_TOKENS)
            if used + cost > budget and shown:
                continue
            held[line.number], used = text, used + cost
        shown.append(line)
    near = await _neighbours(contexts, shown, around, budget) if around else {}
    if shown and _heads(shown[0], near.get(shown[0].id, {})):
        # the best line's block first: a changelog entry under its header, a manual option's description
        for number, text in await _block(contexts, shown[0], budget):
            cost = count(_row(number, text, numbered))
            if number in chosen[shown[0].id] or used + cost > fill:
                break
            chosen[shown[0].id][number], used = text, used + cost
    for distance in range(1, around + 1):
        for line in shown:
            for number in (line.number - distance, line.number + distance):
                text = near[line.id].get(number)
                if text is None or number in chosen[line.id]:
                    continue
                cost = count(_row(number, text, numbered))
                if used + cost > fill:
                    return _rendered(chosen, numbered), shown
                chosen[line.id][number], used = text, used + cost
    return _rendered(chosen, numbered), shown


async def _neighbours(contexts: ContextStore, shown: list[Line], around: int, budget: int) -> dict[str, dict[int, str]]:
    """The lines within `around` of the shown lines, by document: lines whose neighbourhoods touch are read
    as one span, so no line is read twice (each line's neighbourhood keeps its own `budget` of tokens)."""
    near: dict[str, dict[int, str]] = {}
    for ref in dict.fromkeys(line.id for line in shown):
        numbers = sorted({line.number for line in shown if line.id == ref})
        ranges: list[list[int]] = []  # [first line, last line, how many shown lines it covers]
        for number in numbers:
            if ranges and number - around <= ranges[-1][1] + 1:
                ranges[-1][1], ranges[-1][2] = number + around, ranges[-1][2] + 1
            else:
                ranges.append([max(1, number - around), number + around, 1])
        held = near.setdefault(ref, {})
        for start, end, covered in ranges:
            span = await contexts.read(ref, start, end, max_tokens=budget * covered)
            held.update(enumerate(span.text.split("\n"), start=span.start_line))
    return near


def _heads(line: Line, near: dict[int, str]) -> bool:
    """Whether the lines read next to `line` show it may head a block: the next one is blank (a Debian changelog
    header's is) or indented deeper."""
    following = near.get(line.number + 1)
    if following is None:
        return False
    return not following.strip() or deeper(following, line.text)


async def _block(contexts: ContextStore, line: Line, budget: int) -> list[tuple[int, str]]:
    """The lines indented deeper than `line` right after it, blank lines aside, up to the first that is not
    (at most `BLOCK_LINES`): the lines it heads."""
    span = await contexts.read(line.id, line.number, line.number + BLOCK_LINES, max_tokens=budget)
    rows = span.text.split("\n")
    numbers = list(range(span.start_line, span.start_line + len(rows)))
    if not rows or numbers[0] != line.number:
        return []
    return [(numbers[j], rows[j]) for j in under(rows, numbers, 0)]


def _row(number: int, text: str, numbered: bool) -> str:
    return f"{number}| {text}" if numbered else text


def _rendered(chosen: dict[str, dict[int, str]], numbered: bool) -> Lines:
    """Each document's chosen lines in its own order under an `id lines a-b:` header; `...` marks a gap; a
    blank line between two documents."""
    rows: list[ShownLine | str] = []
    for ref, held in chosen.items():
        if not held:
            continue
        numbers = sorted(held)
        rows += [""] if rows else []
        rows.append(f"{ref} lines {numbers[0]}-{numbers[-1]}:")
        for previous, number in zip([numbers[0] - 1, *numbers], numbers, strict=False):
            if number > previous + 1:
                rows.append("...")
            rows.append(ShownLine(ref, number, held[number]) if numbered else held[number])
    return Lines(tuple(rows))


def quote_lines(lines: list[Line], most: int = 2) -> str:
    """Lines as an answer that quotes them: `doc:1:49: "text"` each."""
    return "\n".join(f'{line.id}:{line.number}: "{line.text.strip()}"' for line in lines[:most])
