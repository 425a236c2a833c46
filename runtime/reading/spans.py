"""Extracting an answer: the span of a shown line that the model's own likelihood prefers.

A small model often sees the right line and still cannot write the value
out of it: asked "When did Jon and Gina decide to collaborate?" it answers
with another turn's date; asked "What is DEFAULT_ENTROPY in the secrets
module?" it quotes `nbytes = DEFAULT_ENTROPY`. So when a shown line holds
the kind of value asked for, the answer is a span of that line, not free
text. `candidate_spans` lists, first match wins:

- a date ("When ...", "What year ...", "What is the date ...":
  `answer_kind`): the dates on the document line shown that answers the
  question best among those that hold one (BM25 over the shown lines for
  the question's words, `memory.context.lexical.Ranker`; a conversation's
  every turn holds its own date, so there it is the best line, the one a
  run that cannot answer quotes), a date a conversation turn states before
  the turn's own date tag (`[17 March 2023] John: ... on 4 February 2021`);
- the value of a name the question asks about (by its name, or by the words
  of its every part: "copy buffer size" asks about `COPY_BUFSIZE`), on a
  shown line that assigns it (`runtime.reading.fields.definition`: `BPF =
  53`, not `RECIP_BPF = 2 ** -BPF`);
- an option ("Which ls option ...", "... flag ..."): the options the best
  shown line that defines some defines (`-S`), a line whose options all
  begin `--no-` only when the question asks for something not to happen;
  when the question names an
  option ("Which tar option is --directory?"), the other names the line
  that defines it gives (`-C`);
- an exception ("Which exception does check_call raise?"): the exception
  names on the shown lines about the question, best line first; only those
  whose name says the question's words (`SameFileError`: "the same file"),
  when some do;
- a field: the best line about the question shaped `key: value`
  (`Upstream-Name: GNU Gzip`, `__author__ = '...'`, `Written by Greg
  Ward`) whose key, or the comment that says what the key is (`BPF = 53  #
  Number of bits in a float`), holds a word of the question ("wrote":
  `__author__`; "copyright": `Copyright: 1996-2010 Julian R Seward`): its
  value, and the value's person or thing without the e-mail address and
  years beside it; of several lines with that key, the first in the
  document (a Debian copyright file's first `Copyright:` is the package's
  own); never a value that is code (`self.file.readline(...)`);
- a count ("How many days ...?": `30 days` on `prior to 30 days after`)
  off a document's line, never a conversation's turn (a chat restates and
  updates its numbers: "150 commits" for 165, measured on BEAM),
  an address ("What's the link to the MPL?"), a CVE or a bug number
  ("Which bug did sed 4.7-1 close?": `Closes: #917065`): those the best
  line about the question that gives any gives;
- a section's title ("What is section 7 about?": `7. Disclaimer of
  Warranty. Unless ...`), from the shown line that opens the section;
- a person, for a question that asks for one ("Who ...",
  `runtime.reading.forms`): the people the best line about the question
  that names any names as people (`runtime.reading.fields.persons`: `This
  package was put together by Matthias Klose <doko@debian.org>`), the
  sign-off of the Debian changelog entry the best line is in (who made that
  upload: "Who did the NMU?" is asked of its `Non-maintainer upload.`), else
  those of the first shown line that names any of the document the best
  line is in (not a conversation's turn): a file names its author or
  packager before others.

`choose_span` takes a lone candidate as it is; among several it asks the
model to score each as its whole reply to the reading prompt
(`runtime.models.base.Continuation`: the log-probability of the span's
tokens and of the turn ending after it) and takes the likeliest. Measured
(docs/benchmarks.md), spans chosen among every span of the lines (names,
quoted phrases, short clauses) lost to free text on LoCoMo and BEAM ("art"
for "painting"), and so did the numbers of a long chat message ("150
commits" for 165): a span is the answer only where the line's shape says
which span is the value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loci.memory.context.lexical import asked, content_terms, line_terms
from loci.memory.text import words
from loci.memory.text.terms import Terms
from loci.runtime.models.base import Continuation, Model
from loci.runtime.prompt.topic import shared_words, without_documents
from loci.runtime.reading.answers import ANSWERING, OPTION, scored_rows, under
from loci.runtime.reading.fields import (
    ASKS_OPTION,
    addresses,
    answer_kind,
    counted,
    counts,
    definition,
    exceptions,
    field,
    heading,
    meant_names,
    names,
    names_someone,
    options,
    persons,
    references,
    section,
)
from loci.runtime.reading.forms import asked_form

__all__ = ["SPAN_LINES", "Span", "answer_kind", "candidate_spans", "choose_span"]

SPAN_LINES = 1  # the best line shown for the question: the one a run that cannot answer quotes
MOST_SPANS = 32

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_DATE = re.compile(
    rf"\b\d{{1,2}}(?:st|nd|rd|th)? {_MONTH},? \d{{4}}\b|\b{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?\b"
    rf"|\b{_MONTH},? \d{{4}}\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b"
)
# a question that asks for something not to happen, which a `--no-...` option may do ("what flag stops cp overwriting?")
_NEGATING = re.compile(r"\b(no|not|never|don'?t|doesn'?t|stops?|prevents?|disables?|avoids?|without|except)\b", re.I)
_NUMERIC = re.compile(r"0x[0-9a-fA-F]+|\d[\d_.]*")  # a value that is a number
_QUOTED_TEXT = re.compile(r"\"[^\"]*\"|'[^']*'")
# an operator between spaces beside a name, outside quotes: `"WSGIServer/" + __version__`, not `2**31-1` nor a dash
_EXPRESSION = re.compile(r"\S\s+[+*/%]\s+[A-Za-z_]\w*|\b[A-Za-z_]\w*\s+[+*/%]\s+\S")
_CODE = re.compile(r"[\w\]]\(|\bself\.")  # a call or an attribute of `self`: code, not a value
_ENTRY = re.compile(r"^\S+ \([^)\s]+\) [^;]+; urgency=")  # a Debian changelog entry's header
_SIGNOFF = re.compile(r"^ -- \S.*<[^>]+>")  # and its sign-off
_TAG = re.compile(r"^\s*\[[^\]]{1,40}\]")  # a conversation turn's own date, `[17 March 2023] John: ...`
# a conversation's turn: its date tag or a chat role (`user: ...`)
_TURN = re.compile(rf"{_TAG.pattern}|^\s*(user|assistant|system)\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class Span:
    """A candidate answer: its text and the document line it is on."""

    text: str
    id: str
    number: int
    # read off a line chosen for want of one about the question (the first person a file names, an option whose
    # block says under half of the question's words)
    guessed: bool = False


def candidate_spans(
    shown: str,
    question: str,
    *,
    documents: Sequence[str] = (),
    lines: int = SPAN_LINES,
    most: int = MOST_SPANS,
) -> list[Span]:
    """The spans of the shown lines that may be the answer, best first, at most `most`: the dates on the best
    `lines` lines for a date question; else a name's value, an option, an exception, a field's value or a
    person. Lines are ranked for the question without the words that name the `documents` (file names,
    `runtime.prompt.topic`); a field's key may say them (`ZIP_LZMA` in `zipfile.py`)."""
    whole, question = question, without_documents(question, documents)
    rows = scored_rows(shown, question)
    about = _about(rows)
    spans: dict[str, Span] = {}

    def add(ref: str, number: int, values: list[str], *, guessed: bool = False) -> None:
        for value in values:
            if value.strip():
                spans.setdefault(value.strip().casefold(), Span(value.strip(), ref, number, guessed))

    kind = answer_kind(question)
    if kind == "date":
        dated = [row for row in about if _dates(row[2])][:1] if lines == 1 else _best_rows(rows, lines)
        for ref, number, text in dated:
            add(ref, number, _dates(text))
        if spans:  # else the spans a question of any kind may have (a named value, a count, an address)
            return list(spans.values())[:most]
    if number_asked := section(question):  # "What is section 7 about?": the title the line that opens it gives
        for ref, number, text, _ in rows:
            if title := heading(text, number_asked):
                add(ref, number, [title])
                break
    meant = meant_names(question, [row[2] for row in rows], whole=whole)
    for ref, number, text, _ in rows:
        add(ref, number, [value for name in meant if (value := definition(text, name)) and not _computed(value)])
    for reader in _readers(question):  # a count, an address, a CVE or bug number: the best line's that gives one
        for ref, number, text in _first_for_addresses(about, question) if not spans else []:
            if found := reader(text):
                add(ref, number, found)
                break
    if not spans and kind == "option":
        # "Which tar option is --directory?": the line that defines the option named, its other names
        named = set(OPTION.findall(question))
        terms = asked(content_terms(ASKS_OPTION.sub(" ", question)))  # what the option is to do
        defining = _option_blocks(rows, terms)
        defining = [block for block in defining if named & set(options(block.row[2]))] or defining
        if not _NEGATING.search(question):  # "the flag for case insensitive" is `-i`, not `--no-ignore-case`
            defining = [b for b in defining if not all(o.startswith("--no-") for o in options(b.row[2]))] or defining
            defining = _named_for(defining, terms)
        else:  # "what flag stops cp overwriting?": an option whose block says not to (`do not overwrite`)
            defining = [block for block in defining if _NEGATING.search(block.text)] or defining
        for block in defining[:1]:
            ref, number, text = block.row
            # a block that says under half of the question's words is a guess (`-z` for "... watch a log file")
            guessed = not named and 2 * block.said < len(terms.stems)
            add(ref, number, [option for option in options(text) if option not in named], guessed=guessed)
    if not spans and kind == "exception":
        named = [(ref, number, name) for ref, number, text in about for name in exceptions(text)]
        # an exception whose name says what the question does (`SameFileError`: "the same file") is the one
        said = [row for row in named if _names_it(question, row[2])]
        for ref, number, name in said or named:
            add(ref, number, [name])
    if not spans and kind is None:
        for ref, number, value in _fields(about, whole, shared_words(documents)):
            add(ref, number, [names(value), value])
    if not spans and asked_form(question) == "person":
        # the best line about the question that names people; else the first shown that does, in a document, not
        # a conversation (a file names its author or packager before others: "This package was put together by")
        named = {about[0][0]} if about else {row[0] for row in rows}  # the document the best line is in
        first = sorted(row[:3] for row in rows if row[0] in named and not _TURN.match(row[2]))
        signed = _signed(about[:1], rows)
        for i, (ref, number, text) in enumerate([*signed, *about, *first]):
            if found := persons(text):
                add(ref, number, found, guessed=i >= len(signed) + len(about))  # a file's first person: a guess
                break
    return list(spans.values())[:most]


def _computed(value: str) -> bool:
    """Whether a value is computed from a name (`"WSGIServer/" + __version__`), not stated (`2**31-1`)."""
    return bool(_EXPRESSION.search(_QUOTED_TEXT.sub('""', value)))


@dataclass(frozen=True)
class _Block:
    """An option's line of a manual with the description under it: the line, their text, how many of the
    question's words they say, and their best line's score."""

    row: tuple[str, int, str]
    text: str
    said: int
    best: float


def _option_blocks(rows: list[tuple[str, int, str, float]], terms: Terms) -> list[_Block]:
    """The lines that define options, ranked by their block (the option's line and the description under it:
    `print sizes in human readable format (e.g., 1K 234M 2G)` under `-h, --human-readable`): by how many of
    the question's `terms` it says, then by its best line's score; those whose block says nothing of the
    question left out."""
    texts, numbers = [row[2] for row in rows], [row[1] for row in rows]
    blocks = []
    for i, (ref, number, text, _) in enumerate(rows):
        if options(text):
            block = [i, *under(texts, numbers, i)]
            best = max(rows[j][3] for j in block)
            if best > 0:
                said = " ".join(texts[j] for j in block)
                blocks.append((-i, _Block((ref, number, text), said, len(terms.held(said)), best)))
    blocks.sort(key=lambda item: (item[1].said, item[1].best, item[0]), reverse=True)
    return [block for _, block in blocks]


def _named_for(defining: list[_Block], terms: Terms) -> list[_Block]:
    """The option blocks, best first, those whose long name the question says whole (`--delimiter` for "Which
    cut option sets the delimiter?", not `-s, --only-delimited`) put first when they say as many of the
    question's words as the best block does."""
    if len(defining) < 2:
        return defining

    def whole(option: str) -> bool:
        parts = option.lstrip("-").split("-")
        return option.startswith("--") and all(part and terms.held(part) for part in parts)

    best = defining[0].said
    named = [b for b in defining if b.said >= best and any(whole(option) for option in options(b.row[2]))]
    return named + [block for block in defining if block not in named]


def _signed(best: list[tuple[str, int, str]], rows: list[tuple[str, int, str, float]]) -> list[tuple[str, int, str]]:
    """The sign-off line (` -- Bastian Germann <bage@debian.org>  Mon, 19 Dec 2022`) of the Debian changelog
    entry the best line is in, when it is shown: who made that upload."""
    for ref, number, _ in best:
        for row in sorted(row[:3] for row in rows if row[0] == ref and row[1] > number):
            if _ENTRY.match(row[2]):
                return []
            if _SIGNOFF.match(row[2]):
                return [row]
    return []


def _first_for_addresses(about: list[tuple[str, int, str]], question: str) -> list[tuple[str, int, str]]:
    """The lines about the question, best first; in document order for an address (a licence
    or README gives its own address first, `http://www.apache.org/licenses/` under its title, before the
    addresses it mentions)."""
    return sorted(about, key=lambda row: row[:2]) if asked_form(question) == "address" else about


def _readers(question: str) -> list[Callable[[str], list[str]]]:
    """What reads the value a question asks for off a line, when it asks for a count ("How many days ...": `30
    days`), an address ("What's the link to ...": `http://...`) or a CVE or bug number."""
    readers: list[Callable[[str], list[str]]] = []
    if thing := counted(question):  # off a document's line: a chat's turns restate and update their numbers
        readers.append(lambda text: [] if _TURN.match(text) else counts(text, thing))
    if asked_form(question) == "address":
        readers.append(addresses)
    readers.append(lambda text: references(text, question))
    return readers


def _fields(about: list[tuple[str, int, str]], question: str, topic: set[str]) -> list[tuple[str, int, str]]:
    """The value of the best line about the question shaped `key: value` whose key says what the question asks
    (`_says`), or whose comment, which says what the key is, and key hold two of its words; of the lines with
    that key, the first in the document (the first `Copyright:` of a Debian copyright file is the package's
    own). A value that only repeats the question (`self.placeholder = placeholder`), is code
    (`self.file.readline(self.maxline + 1)`), is computed from a name (`"WSGIServer/" + __version__`) or has no
    word (`Files: *`) is no field's; asked who, nor is one
    that names no one (`fields.names_someone`) or only the documents asked of (`Upstream-Name: XZ Utils`). When
    another key says the question as much and gives another number, which the question means is not known: none."""
    terms = asked(content_terms(question))
    person = asked_form(question) == "person"
    shaped = []
    for ref, number, text in about:
        found = field(text)
        if not found or not (_says(terms, found[0], topic) or len(terms.held(f"{found[0]} {found[2]}")) > 1):
            continue
        said = line_terms(found[1])
        if (said and said <= line_terms(question)) or _CODE.search(found[1]) or not re.search(r"\w", found[1]):
            continue
        if _computed(found[1]):
            continue  # a value computed from a name (`"WSGIServer/" + __version__`) is not the value
        if person and (not names_someone(found[1]) or said <= line_terms(question) | line_terms(" ".join(topic))):
            continue  # asked who: a value that names no one, or only the package asked of (`XZ Utils`)
        shaped.append((ref, number, found[0].casefold(), found[1]))
    if not shaped:
        return []
    ref, _, key, value = shaped[0]
    held = terms.held(key)
    if _NUMERIC.fullmatch(value) and any(
        other[2] != key and other[3] != value and _NUMERIC.fullmatch(other[3]) and terms.held(other[2]) == held
        for other in shaped
    ):
        return []  # keys that say the question alike give other numbers (`_COMPRESS_LEVEL_FAST = 1`, `_BEST = 9`)
    first = min((row for row in shaped if row[0] == ref and row[2] == key), key=lambda row: row[1])
    return [(first[0], first[1], first[3])]


async def choose_span(model: Model, messages: list[dict[str, str]], spans: list[Span]) -> Span | None:
    """The span the model finds likeliest as its whole reply to `messages` (its tokens, then the end of the
    turn); None without spans. `model` must score (`runtime.models.base.can_score`)."""
    if len(spans) < 2:
        return spans[0] if spans else None
    scored = await model.score(messages, [span.text for span in spans])  # type: ignore[attr-defined]
    best = max(range(len(spans)), key=lambda i: (_whole(scored[i]), -i))
    return spans[best]


def _whole(scored: Continuation) -> float:
    """The log-probability that the reply is exactly the span: its tokens, then the end of the turn."""
    return scored.total + scored.end


def _says(terms: Terms, key: str, topic: set[str]) -> bool:
    """Whether the key says a word of the question that does not only name its documents (`topic`): in
    `ftplib.py`, `FTP_PORT` does not say "How long may a line be from the FTP server?"; `EPOCH_YEAR` says "From
    which year does the cookie jar count time?"."""
    return any(not any(name.startswith(term) or term.startswith(name) for name in topic) for term in terms.held(key))


def _names_it(question: str, name: str) -> bool:
    """Whether every part of an exception's name but its kind (`SameFileError`: same, file) is a word of the
    question."""
    parts = [part for part in words(name)[1:] if part not in {"error", "exception", "warning"}]
    said = set(words(question)) | line_terms(question)  # stop words too: "the same file"
    return bool(parts) and all(part in said or line_terms(part) <= said for part in parts)


def _best_rows(rows: list[tuple[str, int, str, float]], most: int) -> list[tuple[str, int, str]]:
    """The document lines (`id`, number, text) that rank best for the question's words, best first."""
    order = sorted(range(len(rows)), key=lambda i: (rows[i][3], -i), reverse=True)
    return [rows[i][:3] for i in order[:most] if rows[i][3] > 0]


def _about(rows: list[tuple[str, int, str, float]]) -> list[tuple[str, int, str]]:
    """The document lines about the question (at least `ANSWERING` of the best line's score), best first, each
    followed by the lines indented under it (`runtime.reading.answers.under`: a changelog entry's)."""
    best = max((row[3] for row in rows), default=0.0)
    order = sorted(range(len(rows)), key=lambda i: (rows[i][3], -i), reverse=True)
    texts, numbers = [row[2] for row in rows], [row[1] for row in rows]
    about: dict[int, None] = {}
    for i in order:
        if best > 0 and rows[i][3] >= ANSWERING * best:
            about.update(dict.fromkeys([i, *under(texts, numbers, i)]))
    return [rows[i][:3] for i in about]


def _dates(text: str) -> list[str]:
    """The dates on the line `text`: those the turn states, else the turn's own (`[17 March 2023] John: ...`)."""
    stated = [m.group(0) for m in _DATE.finditer(_TAG.sub(" ", text, count=1))]
    return stated or [m.group(0) for m in _DATE.finditer(text)]
