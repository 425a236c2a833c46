"""A reading run's second look: the question asked again of one line, when the first answer is not an answer.

A small model answering from eight lines often does not answer: it copies
one of the lines whole (`[28 August 2023] Melanie: "Summer Sounds"- ...`,
or `Jon: Creating a special experience ...`), restates the question ("creative
project"), or says what no line says. Sending it back with the reason made it
ramble about the lines (`runtime.loop.decide`), and quoting the best line
instead answers a two-word question with a whole line.

So the run asks once more of the one line the answer rests on: the line it
copies, else the line that holds what of it stands, else the best line for
the question (`focus_line` picks it), shown alone, without its number and
without a conversation turn's date and speaker, under the same instruction
as the first ask (`FOCUS_ANSWER`). With one line and the question, the model
writes the value ("Sweden", "a trophy"), not the line. The decider keeps that
answer only when it passes the same checks (`runtime.reading.answers`), does
not open as a conversation turn, and says what the line says (`from_line`:
claims of its own, or two thirds of its own words on the line; "The original
author of GNU tar is unknown" is not on a line that names him), and, when the
first answer was a shown line word for word (`verbatim`), has claims of its
own (the line is a truer answer than a claim-less sentence drawn from it:
"The coin with the metal detector has been found" for "Mostly just bottle
caps, but a couple of times I found old coins"); it cites the line.
Otherwise the first answer goes on as before.

`copied_line` is the test for a copied line: the answer opens as a
conversation turn does (`[date] Name:` or `Name:`), or it has at least
`COPY_WORDS` words and four fifths of them are the words of one line shown.
A short answer that is a line's value (`SMTP_PORT = 25`) is not a copy.
`bare_head` is the other half: an answer that is only a turn's head
(`[15 July 2023] Melanie:`, or a date stamp when the question does not ask
when), asked again of the best line.
"""

from __future__ import annotations

import re

from memory.context.lexical import line_terms, words
from runtime.reading.answers import SHOWN_HEADER, SHOWN_ROW, supporting_line
from runtime.reading.look import Line

__all__ = [
    "BARE_HEAD",
    "COPY_WORDS",
    "FOCUS_ANSWER",
    "TURN_HEAD",
    "bare_head",
    "copied_line",
    "focus_line",
    "focus_prompt",
    "from_line",
    "shown_rows",
    "verbatim",
]

COPY_WORDS = 8
COPY_SHARE = 0.8
FOCUS_ANSWER = "{line}\n\nAnswer the question from the line above, in a few words.\nQuestion: {task}\nAnswer:"
# A conversation turn as the documents hold it: `[8 May 2023] Caroline: text`, or `Caroline: text`.
# An answer that is only a turn's date stamp, or its date and speaker: `[13 October 2023]`, `[15 July 2023] Melanie:`.
BARE_HEAD = re.compile(r"^\s*\[[^\]\n]{1,40}\]\s*(?:[A-Z][\w'.-]{0,30}:?)?\s*$")
ASKS_WHEN = re.compile(r"(?i)^\W*(?:when|what (?:date|day|month|year|time))\b")
TURN_HEAD = re.compile(r"^\s*(?:\[[^\]\n]{1,40}\]\s*)?[A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30})?:\s")


def shown_rows(shown: str) -> list[Line]:
    """The numbered document lines of `shown` (the first look's `doc:1 lines a-b:` blocks), in order."""
    rows: list[Line] = []
    ref = ""
    for row in shown.split("\n"):
        if header := SHOWN_HEADER.match(row):
            ref = header.group(1)
        elif (numbered := SHOWN_ROW.match(row)) and ref:
            rows.append(Line(ref, int(numbered.group(1)), numbered.group(2), 0.0))
    return rows


def bare_head(answer: str, question: str) -> bool:
    """Whether `answer` is only a turn's head (its date, or date and speaker), and not a date asked for."""
    head = BARE_HEAD.match(answer)
    return bool(head) and (answer.strip().endswith(":") or not ASKS_WHEN.match(question))


def copied_line(answer: str, rows: list[Line]) -> Line | None:
    """The shown line `answer` copies, or None: the line that holds the most of its words, when the answer
    opens as a conversation turn does or is a long run of one line's words."""
    said = words(answer)
    if not said or not rows:
        return None
    best = max(rows, key=lambda row: _share(said, row.text))
    share = _share(said, best.text)
    if TURN_HEAD.match(answer) and share >= 0.5:
        return best
    return best if len(said) >= COPY_WORDS and share >= COPY_SHARE else None


def focus_line(answer: str, rows: list[Line], shown: str, question: str, best: Line | None) -> Line | None:
    """The one line to ask again: the line the answer copies, else the line shown that holds what of it
    stands, else `best` (the best line for the question); `best` for an answer that is only a turn's head."""
    if bare_head(answer, question):
        return best
    if copied := copied_line(answer, rows):
        return copied
    if spot := supporting_line(answer, shown, question):
        return Line(spot[0], spot[1], spot[2], 0.0)
    return best


def focus_prompt(line: Line, question: str) -> str:
    """The question asked of one line, shown without its number and without a turn's date and speaker."""
    text = TURN_HEAD.sub("", line.text, count=1).strip() or line.text.strip()
    return FOCUS_ANSWER.format(line=text, task=question)


def verbatim(answer: str, rows: list[Line]) -> bool:
    """Whether four fifths of the answer's words are one shown line's: the line itself, if long."""
    said = words(answer)
    return bool(said and rows) and max(_share(said, row.text) for row in rows) >= COPY_SHARE


def from_line(answer: str, line: Line, question: str, claimed: bool) -> bool:
    """Whether a focused answer says what `line` says: it has claims of its own (`claimed`; the checks hold
    them to the lines), or two thirds of its own words, those not in the question, are the line's."""
    own = line_terms(answer) - line_terms(question)
    return claimed or (bool(own) and 3 * len(own & line_terms(line.text)) >= 2 * len(own))


def _share(said: list[str], line: str) -> float:
    held = set(words(line))
    return sum(1 for word in said if word in held) / len(said)
