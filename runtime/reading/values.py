"""What an answer asserts of its own, whether it is the value asked, whether a later line changes it.

`runtime.reading.answers.ungrounded` asks whether each claim of an answer
is on a line about the question. Three answers pass it and are still not
answers a person can trust:

- An answer with no claim of its own (`own_claims`): no name, number,
  date, identifier or quoted phrase beyond the question's ("MAXLINELEN in
  email.header is a header string ..."). Its words may all be on a line, but
  nothing in it can be checked there, so it is never `done`
  (`runtime.loop.decide` makes it `partial`, with the reason).
- A value the text states and later changes (`superseded`): a chat says
  "coverage is 85%" and, later, "coverage is now 78%". The newer value wins,
  as recall's newer-first does (`memory.text.values`, the one rule): a number claim stands only when no later line
  about the question (a document line shown with a higher line number, in
  the same document) states a different number of the same kind, the same
  unit right after it (`%`, `ms`, `calls`, `miles`; a day before a month is a
  date, not such a value: a chat's later "28 August" does not change "23
  August"). A line about the question
  is one whose BM25 score for its words is at least `ANSWERING` of the best
  shown line's, as for `ungrounded`.
- A number on a line about the name, which is not the name's value
  (`not_the_value`): asked "What is the value of COPY_BUFSIZE?", "1024"
  stands on `COPY_BUFSIZE = 1024 * 1024 if _WINDOWS else 64 * 1024` and is
  not what it says; asked the value of `BPF`, "2" stands on `RECIP_BPF = 2
  ** -BPF` while `BPF = 53` is shown. When a shown line assigns a name the
  question asks about (`runtime.reading.fields`), the answer must say that
  value: all of it, every number of it, or, for a value without numbers,
  half its claims. Asked which exception is raised, an answer that names
  none (`child_exception_type(err_msg)`) is not the answer either, nor, asked
  what section 8 is called, anything but the title of the line that opens it
  (when no line shown opens it, the answer cannot stand); nor is an
  answer without the form the question asks for (`runtime.reading.forms`: a
  name for "Who ...", a number for "How many ...", an address, an option),
  nor, asked for a number, a list of four numbers or more ("1. 100% test
  coverage 2. 15% error handling ..." for "How many features did I
  mention?"), nor, asked for a total ("in total across all sessions"), a
  number no line about the question states as one (a chat's "I completed 12
  problems" for the total over its sessions; "now I have a total of 10
  cards" stands).
"""

from __future__ import annotations

import re

from loci.memory.graph.quoted import without_notes
from loci.memory.text import words
from loci.memory.text.repeats import flat as _flat
from loci.memory.text.values import changes, measures
from loci.runtime.reading.answers import ANSWERING, about_lines, claims, scored_rows
from loci.runtime.reading.fields import answer_kind, definition, exceptions, heading, meant_names, section
from loci.runtime.reading.forms import asked_form, common_words, missing_form

__all__ = ["not_the_value", "own_claims", "superseded"]

_FORM_WORDS = {
    "email": "an e-mail address",
    "option": "an option",
    "address": "an address",
    "number": "a number",
    "year": "a year",
    "person": "a person's name",
}

_TITLE_ASKED = re.compile(r"\b(title|titled|called|named|heading|about)\b", re.IGNORECASE)
# a question that asks for a sum over what was said ("How many ... in total across all sessions?")
_TOTAL = re.compile(r"\b(total|totals|altogether|all together|combined|in all|overall|sum)\b", re.IGNORECASE)
_LISTED = 4  # asked for a number, an answer with this many of its own lists things ("1. 100% test coverage 2. ...")
_NUMERAL = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w.]*\d)")


def own_claims(answer: str, question: str) -> list[str]:
    """The claims of `answer` that are not the question's own words (lines from memory under it are not the
    question: a claim they hold is the answer's own, to be grounded as any other); a quoted phrase of the
    question's words only is the question restated (`"Grep's nickname in its readme."`), not a claim."""
    asked = set(words(without_notes(question)))
    return [
        claim
        for claim in claims(answer)
        if claim.casefold() not in asked and not (" " in claim and set(words(claim)) <= asked)
    ]


def superseded(answer: str, shown: str, question: str) -> list[str]:
    """The number claims of `answer` that a later line about the question changes: a different number with
    the same unit after it, on a shown line of the same document with a higher number."""
    stated = dict(measures(answer))
    if not stated:
        return []
    rows = _about_rows(shown, question)
    changed = []
    for value, unit in stated.items():
        where = [(ref, number) for ref, number, text in rows if (value, unit) in measures(text)]
        for ref, newest in {ref: max(n for r, n in where if r == ref) for ref, _ in where}.items():
            later = [text for r, number, text in rows if r == ref and number > newest]
            if any(changes({value}, {v for v, u in measures(text) if u == unit}) for text in later):
                changed.append(value)
                break
    return changed


def not_the_value(answer: str, shown: str, question: str, *, whole: str = "") -> str | None:
    """Why `answer` is not the value the shown lines give for the thing asked, or None: a line shown assigns a
    name the question asks about (`runtime.reading.fields.meant_names`: `COPY_BUFSIZE = 1024 * 1024 if
    _WINDOWS else 64 * 1024`) and the answer does not give that value (every number of it, or for a value
    without numbers, half its claims); or, no name being meant, the question asks for a number and none of the
    answer's stands as a number of its own on a line about it; or the question asks which exception is raised
    and the answer names none."""
    scored = scored_rows(shown, question)
    rows = [text for _, _, text, _ in scored]
    named = meant_names(without_notes(question), rows, whole=without_notes(whole))
    values = [(name, value) for text in rows for name in named if (value := definition(text, name))]
    if values and not any(_gives(answer, value) for _, value in values):
        name, value = values[0]
        return f"not the value: the line that assigns {name} gives {value!r}, which the answer does not say"
    form = asked_form(without_notes(question))
    if not values and form == "number" and (said := _new_numbers(answer, question)):
        about = about_lines(shown, question, whole=whole)
        if about and not _standing(said, about):
            return f"not the value: the answer's {said[0]} is no number of its own on a line about the question"
        if _TOTAL.search(question) and not _standing(said, [text for text in about if _TOTAL.search(text)]):
            return f"not the total: the question asks for a total, and no line about it states {said[0]} as one"
        if len(said) >= _LISTED:
            return f"not one number: the question asks for a number, and the answer lists {len(said)} of them"
    if (number := section(question)) and _TITLE_ASKED.search(question):
        titles = [title for text in rows if (title := heading(text, number))]
        if not any(_gives(answer, title) for title in titles):
            found = f"the line that opens it says {titles[0]!r}" if titles else "no line shown opens it"
            return f"not the title: the question asks what section {number} is called, and {found}"
    if answer_kind(question) == "exception" and not exceptions(answer):
        return "not an exception: the question asks which exception is raised, and the answer names none"
    common = common_words("\n".join(rows)) if form == "person" else frozenset()  # only a name needs them
    if missing := missing_form(answer, without_notes(question), common=common):
        return f"not the answer: the question asks for {_FORM_WORDS[missing]}, and the answer gives none"
    return None


def _new_numbers(answer: str, question: str) -> list[str]:
    """The numbers of `answer` the question does not say, once each, in order."""
    asked = set(_NUMERAL.findall(question))
    return [n for n in dict.fromkeys(_NUMERAL.findall(answer)) if n not in asked]


def _standing(said: list[str], texts: list[str]) -> bool:
    """Whether one of the numbers `said` stands as a number of its own on one of `texts`: not part of a longer
    number, a name or a version (`1` of `TAIL(1)` or `(default 1.0)`, beside `Print the last 10 lines`); a number
    before a closing bracket stands (`width (default: 70)`)."""
    return any(re.search(rf"(?<![\w.(/-]){re.escape(n)}(?![\w/]|\.\d)", text) for n in said for text in texts)


def _gives(answer: str, value: str) -> bool:
    """Whether `answer` says `value`: the whole of it, every number of it, or (none) half of its claims."""
    if _flat(value) in _flat(answer):
        return True
    numbers = set(_NUMERAL.findall(value))
    if numbers:
        return numbers <= set(_NUMERAL.findall(answer))
    said = {claim.casefold() for claim in claims(value)}
    return bool(said) and 2 * len(said & {claim.casefold() for claim in claims(answer)}) >= len(said)


def _about_rows(shown: str, question: str) -> list[tuple[str, int, str]]:
    """The numbered document lines of `shown` about the question, as (document, line number, text)."""
    rows = scored_rows(shown, question)
    best = max((score for *_, score in rows), default=0.0)
    return [row[:3] for row in rows if best > 0 and row[3] >= ANSWERING * best]
