"""The one line ranker: BM25 over lines, for a question's terms.

`Ranker` counts lines first, then scores them: a term's weight is its
inverse line frequency among the lines counted (`log(1 + lines / lines
with the term)`), a line scores the weights of the distinct terms it holds,
and a long line a little less (BM25's length norm, `b`: 0.5 by default). Which terms a
line holds is the ranker's `holds`: by default a question's stems as
`memory.text.terms.Terms` finds them (stems, related words, words run
together, the question frame's `STOP_WORDS` aside); the context search's
best line of a hit gives the index's own words instead
(`memory.context.fulltext`), with no length norm (`b` 0): among the few
lines of one chunk a long line is as good an answer as a short one (the
measure is in docs/benchmarks.md, "Words in one room"). What a ranker has
counted travels as plain data (`counts`, `Ranker.counted`): a long
document's job counts every line once, keeps the counts in its checkpoint,
and weighs the lines it found by them when it chooses its answer
(`runtime.digest.choice`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loci.memory.text.stops import STOP_WORDS

__all__ = ["K1", "OKAPI_B", "Ranker", "okapi", "okapi_idf"]


K1, OKAPI_B = 1.2, 0.75  # FTS5's bm25() defaults: term saturation and length normalization


def okapi_idf(rows: int, hits: int) -> float:
    """A term's inverse document frequency as FTS5's bm25() computes it: `hits` of `rows` rows hold it."""
    return max(1e-6, math.log((rows - hits + 0.5) / (hits + 0.5)))


def okapi(idf: float, count: int, size: int, average: float) -> float:
    """One term's part of a row's FTS5 bm25(): `count` times in a row of `size` tokens, `average` the rows'."""
    return idf * count * (K1 + 1) / (count + K1 * (1 - OKAPI_B + OKAPI_B * size / average))


@dataclass
class Ranker:
    """BM25 over lines for one question's `terms`: count the lines first, then score them."""

    terms: set[str]
    lines: int = 0
    chars: int = 0
    spread: dict[str, int] = field(default_factory=dict)
    holds: Callable[[str], set[str]] | None = field(default=None, repr=False)
    b: float = 0.5  # how much a line's length lowers its score (BM25's b: 0 never)

    def __post_init__(self) -> None:
        if self.holds is None:
            # read here, not at import: the stemmer's lexicon is dear to load, and the hook's search never needs it
            from loci.memory.text.terms import Terms

            self.holds = Terms(self.terms, ignore=STOP_WORDS).held

    def counts(self) -> dict[str, Any]:
        """What has been counted, as plain data (JSON): the lines, their characters, and how many hold each term."""
        return {"lines": self.lines, "chars": self.chars, "spread": dict(self.spread)}

    @classmethod
    def counted(cls, terms: set[str], counts: dict[str, Any], b: float | None = None) -> Ranker:
        """A ranker for `terms` that starts from `counts` (`Ranker.counts` of another ranker, over the same lines:
        the terms it did not count hold no line); `b` the length norm, the default when None."""
        spread = {term: int(n) for term, n in counts.get("spread", {}).items() if term in terms}
        lines, chars = int(counts.get("lines", 0)), int(counts.get("chars", 0))
        if b is None:
            return cls(terms, lines, chars, spread)
        return cls(terms, lines, chars, spread, b=b)

    def count(self, text: str, held: set[str]) -> None:
        """Count one line (every line counted, whether it holds a term or not; `held` its terms)."""
        self.lines += 1
        self.chars += len(text)
        for term in held:
            self.spread[term] = self.spread.get(term, 0) + 1

    def count_lines(self, total: int, chars: int) -> None:
        """Count `total` lines of `chars` characters that hold no term at all."""
        self.lines += total
        self.chars += chars

    def weight(self, term: str) -> float:
        return math.log(1 + max(1, self.lines) / self.spread[term]) if self.spread.get(term) else 0.0

    def score(self, text: str, held: set[str]) -> float:
        """The weights of the terms the line holds, a long line a little less."""
        average = self.chars / max(1, self.lines) + 1
        return sum(self.weight(t) for t in held) / (1 - self.b + self.b * (len(text) + 1) / average)

    def held(self, text: str) -> set[str]:
        """The terms the line holds (`holds`)."""
        assert self.holds is not None
        return self.holds(text)

    def best(self, lines: list[str]) -> int | None:
        """The index of the best of `lines`, every one of them counted (the first of equals); None when none
        holds a term."""
        found = [self.held(line) for line in lines]
        for line, held in zip(lines, found, strict=True):
            self.count(line, held)
        best, best_score = None, 0.0
        for index, (line, held) in enumerate(zip(lines, found, strict=True)):
            if (score := self.score(line, held)) > best_score:
                best, best_score = index, score
        return best
