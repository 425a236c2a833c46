"""Extracting a date: the one on the best line shown that the model's own likelihood prefers.

A small model often sees the right line and still cannot write the value
out of it: asked "When did Jon and Gina decide to collaborate?" it answers
with another turn's date, or rephrases the question. When the question
asks for a date (`answer_kind`: "When ...", "What year ...", "Which day
..."), `candidate_spans` lists the dates on the document line shown that
answers the question best (BM25 over the shown lines for the question's
words, `memory.context.lexical.Ranker`; the line a run that cannot answer
quotes): "21 July 2023", "March 29", and a date a conversation turn states
before the turn's own date tag (`[17 March 2023] John: ... on 4 February
2021`).

`choose_span` asks the model to score each span as its whole reply to the
reading prompt (`runtime.models.base.Continuation`) and takes the one it
finds likeliest: the log-probability of the span's tokens and of the turn
ending after it. Measured (docs/benchmarks.md), spans chosen so beat free
generation only for dates: among every span of the lines (names, quoted
phrases, identifiers, short clauses) the 135M model picked "art" for
"painting" and "Caroline" for "Melanie's daughter"; among the numbers of a
long chat message it picked "150 commits" for 165 and "12" for "2 weeks";
and among the dates of the best 3 lines, "April 19" beside the "March 29"
of the best line. So only a date question is answered by a span
(`runtime.loop.decide`), and any other is written as free text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from runtime.models.base import Continuation, Model
from runtime.reading.answers import scored_rows

__all__ = ["SPAN_LINES", "Span", "answer_kind", "candidate_spans", "choose_span"]

SPAN_LINES = 1  # the best line shown for the question: the one a run that cannot answer quotes
MOST_SPANS = 32

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_DATE = re.compile(
    rf"\b\d{{1,2}}(?:st|nd|rd|th)? {_MONTH},? \d{{4}}\b|\b{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?\b"
    rf"|\b{_MONTH},? \d{{4}}\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b"
)
_TAG = re.compile(r"^\s*\[[^\]]{1,40}\]")  # a conversation turn's own date, `[17 March 2023] John: ...`
_KINDS = (("date", re.compile(r"\s*(when|(what|which) (day|date|month|year|time))\b", re.IGNORECASE)),)


@dataclass(frozen=True)
class Span:
    """A candidate answer: its text and the document line it is on."""

    text: str
    id: str
    number: int


def answer_kind(question: str) -> str | None:
    """The kind of value `question` asks for: "date" ("When ...", "What year ..."), or None."""
    return next((kind for kind, asks in _KINDS if asks.match(question)), None)


def candidate_spans(shown: str, question: str, *, lines: int = SPAN_LINES, most: int = MOST_SPANS) -> list[Span]:
    """The dates on the best `lines` document lines of `shown` for `question`, best line first, at most `most`."""
    spans: dict[str, Span] = {}
    for ref, number, text in _best_rows(shown, question, lines):
        for value in _dates(text):
            spans.setdefault(value.strip().casefold(), Span(value.strip(), ref, number))
    return list(spans.values())[:most]


async def choose_span(model: Model, messages: list[dict[str, str]], spans: list[Span]) -> Span | None:
    """The span the model finds likeliest as its whole reply to `messages` (its tokens, then the end of the
    turn); None without spans. `model` must score (`runtime.models.base.can_score`)."""
    if not spans:
        return None
    scored = await model.score(messages, [span.text for span in spans])  # type: ignore[attr-defined]
    best = max(range(len(spans)), key=lambda i: (_whole(scored[i]), -i))
    return spans[best]


def _whole(scored: Continuation) -> float:
    """The log-probability that the reply is exactly the span: its tokens, then the end of the turn."""
    return scored.total + scored.end


def _best_rows(shown: str, question: str, most: int) -> list[tuple[str, int, str]]:
    """The document lines of `shown` (`id`, number, text) that rank best for the question's words, best first."""
    rows = scored_rows(shown, question)
    order = sorted(range(len(rows)), key=lambda i: (rows[i][3], -i), reverse=True)
    return [rows[i][:3] for i in order[:most] if rows[i][3] > 0]


def _dates(text: str) -> list[str]:
    """The dates on the line `text`: those the turn states, else the turn's own (`[17 March 2023] John: ...`)."""
    stated = [m.group(0) for m in _DATE.finditer(_TAG.sub(" ", text, count=1))]
    return stated or [m.group(0) for m in _DATE.finditer(text)]
