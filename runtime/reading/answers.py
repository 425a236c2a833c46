"""Answers that are answers: the checks on an answer's text, and the evidence found for it.

`answer_problem` says why an answer's text is not an answer, for the model
to correct (the turn sends it back once, `runtime.loop.decide`):

- it is empty, or only restates the task (every content word of it is the
  task's: "Mel and her kids do creative projects together"), or, in a
  reading run, opens by describing what was shown ("The document contains
  a list of lines ...") rather than answering from it;
- it stops mid-sentence (the reply ran into its token cap without ending a
  sentence; a capped reply that ended a sentence earlier is cut back to it);
- it is a placeholder such as "<the answer>", or repeats the prompt's own
  words rather than the material's: a worked example, or an instruction
  ("This is your last turn ...").

`clean_answer` comes first: it cuts an answer at its first repeated
sentence (a small model loops: "The fee is 12 euros a year." eight times)
and drops every sentence that is the prompt's own words and not the
material's, so what is left is only the model's; when nothing is left the
answer repeats the prompt, and `answer_problem` says so. An answer is never
the prompt: the run then answers with the lines it found instead
(`runtime.reading.look.quote_lines`).

`ungrounded` is the one rule for `done`: an answer stands on its lines when
every claim it makes is on the lines shown to the model (or in the
question): each number and date, each identifier (`PAX_FORMAT`, `os.path`,
`CalledProcessError`: anything with a digit, `_`, an inner `.` or an inner
capital), each option (`-S`, `--sort`), each name (a capitalised word
that is not a stop word; a sentence's first word only when a capitalised
word follows it, as in "Greg Ward wrote it") and each quoted phrase. An
answer with none of these must have its evidence: a line that holds
more than half of its own words (`locate_evidence`: "a cookie with no
value" is not on a line that says only "HTTP Cookie File"), or it is
`partial`.
The lines shown are typed (`runtime.prompt.shown.Lines`: each document
line its document, number and text), so nothing parses the prompt back;
text given as text (numbered as the prompt numbers lines) is read once with
`Lines.parse`.
A claim counts only on a line about the question, when some line shown
holds a word of it ("1" is on some line of any file, `_MAXHEADERS = 100` is
where the answer to "_MAXHEADERS" is; "Simon Marshall" on a `Copyright:`
line does not answer who put the package together): a document line (the
prompt numbers them, `N| text`) whose BM25 score for the question's words
(`memory.context.lexical.Ranker`, over the document lines shown) is at least
`ANSWERING` (half) of the best one's, each word of the question counted once
(the parts of `TextWrapper` are one word, not three) (`PAX_FORMAT = 2` does not say what
`DEFAULT_FORMAT` is: `DEFAULT_FORMAT = PAX_FORMAT` says it better; the line
that assigns a name the question asks about always is), or
another line (the run's own turns and results) that holds a word of the
question. A number counts only whole: the `1` of `HTTP/1.1` is no 1.
The lines indented under a line about the question (`under`: a Debian
changelog entry's items and sign-off under its header) are about it too.
A line that holds a word the question asks to be without (`negated`: "Which
port ... without SSL?", `POP3_SSL_PORT = 995`) is about nothing asked.
Words are compared as the one lexical ranker compares them
(`memory.context.lexical`), the line numbers the prompt puts before lines
left out. "9" and "Greg Ward" are claims on their line; "Raymond Hettinger"
beside a line that says "Author: Steven J. Bethard" is not. `loci run`,
`loci chat` (`runtime.loop.decide`) and `loci digest` (`runtime.digest.verdict`)
all decide with it, through `runtime.reading.judge.judge`.

`locate_evidence` finds the document line an answer rests on when the model
did not cite one (a free-text answer cites nothing): the line of the run's
documents that shares the most words with the answer, found by full-text
search, among the lines found that hold a word of the question when some
do ("a cookie with no value", beside a line that names `http.cookiejar`,
does not say what `EPOCH_YEAR` is). An answer whose words are on no such
line has no evidence, and the run says so (`partial`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from loci.memory.context.fulltext import STOP_WORDS, content_words
from loci.memory.context.lexical import Ranker, content_terms, line_terms
from loci.memory.context.store import ContextStore
from loci.memory.errors import UsageError
from loci.memory.graph.quoted import NOTICE, without_notes
from loci.memory.text import first_repeat, stem, word_tokens, words
from loci.memory.text.words import RUN as _RUN
from loci.runtime.prompt.shown import HEADER, Lines, ShownLine
from loci.runtime.reading.fields import NEGATED, definition, heading, meant_names, options, section

__all__ = [
    "ANSWERING",
    "about_lines",
    "BLOCK_LINES",
    "OPTION",
    "answer_problem",
    "claims",
    "clean_answer",
    "complete_sentences",
    "deeper",
    "locate_evidence",
    "negated",
    "scored_rows",
    "sentences",
    "supporting_line",
    "under",
    "ungrounded",
]

SENTENCE_END = re.compile(r"[.!?)\"'\]]\s")
PLACEHOLDER = re.compile(r"<[^<>\n]{1,60}>")
MIN_ECHO_CHARS = 8
_NOTICE_STEMS = frozenset(stem(word) for word, *_ in word_tokens(NOTICE))
_NOTICE_OPENING = [stem(word) for word, *_ in word_tokens(NOTICE)[:2]]  # "stored notes"
_ECHO_WORDS = 4
_THAT = re.compile(r"^that\s+", re.IGNORECASE)
LINE_NUMBER = re.compile(r"^\d+\|\s*")  # a line copied as the prompt numbers it, `12| text`
# "The document contains a list of lines ...": a small model describing what it was shown, not answering.
ABOUT_THE_TEXT = re.compile(
    r"(the|this|these|that)\s+(document|documents|lines?|text|file|answer|task)\b", re.IGNORECASE
)
# a small model's lead-in before its answer: "Question: <the question>", "The answer to the task is:"
_ANSWER_IS = r"(?:here\s+is\s+)?the\s+answer(?:\s+to\s+(?:the|this|your)\s+(?:task|question))?(?:\s+is)?\s*:\s*"
LEAD_IN = re.compile(rf"^\s*(?:(?:question|task)\s*:[^\n]*\n+\s*)?(?:{_ANSWER_IS})", re.IGNORECASE)
# and one on a line of its own after other text ("-L, --tape-length=N\n\nThe answer is:\n\n..."): what came
# before it was the model's scratch, what follows its answer
LEAD_IN_LATER = re.compile(rf"\n\s*{_ANSWER_IS}", re.IGNORECASE)
NUMBERED = re.compile(r"^\s*\d+\|", re.MULTILINE)  # the numbers the prompt puts before lines
QUOTED = re.compile(r"[\"\u201c]([^\"\u201c\u201d\n]{3,80})[\"\u201d]")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_CAMEL = re.compile(r"[a-z][A-Z]")  # an identifier written in camel case, `CalledProcessError`
OPTION = re.compile(r"(?<![\w-])-{1,2}[A-Za-z0-9?][\w-]*")  # a command's option, `-S`, `--sort`
BLOCK_LINES = 16  # the most lines of a block under a line (`under`)
ANSWERING = 0.5  # a claim's line scores at least this share of the best line's score for the question


def complete_sentences(text: str) -> str:
    """`text` up to the end of its last complete sentence; "" when no sentence ends."""
    ends = [m.end() for m in SENTENCE_END.finditer(text + " ")]
    return text[: ends[-1]].strip() if ends else ""


def sentences(text: str) -> list[str]:
    """The sentences (and lines) of `text`, stripped, in order."""
    return [part.strip() for part in re.split(r"(?<=[.!?])\s+|\n+", text) if part.strip()]


def clean_answer(answer: str, *, frame: str, material: str) -> str:
    """`answer` cut at its first repeated sentence, without a lead-in (`LEAD_IN`), an opening that echoes the
    notice over recalled notes, and the sentences that are the prompt's own words."""
    without = _without_echo(LEAD_IN.sub("", answer, count=1))
    answer = without if without.strip() else answer
    if (later := LEAD_IN_LATER.search(answer)) and answer[later.end() :].strip():
        answer = answer[later.end() :]
    flat_frame, flat_material = _flat(frame), _flat(_without_notice(material))
    said = [LINE_NUMBER.sub("", sentence) for sentence in sentences(answer)]
    kept: list[str] = []
    for sentence in said[: first_repeat(said, key=_flat)]:
        flat = _flat(sentence)
        if len(flat) >= MIN_ECHO_CHARS and flat in flat_frame and flat not in flat_material:
            continue
        kept.append(sentence)
    if not kept:
        return ""
    return " ".join(kept) if kept != said else LINE_NUMBER.sub("", answer.strip())


def _without_echo(answer: str) -> str:
    """`answer` without an opening that echoes the notice over recalled notes ("Stored notes recalled from
    memory, quoting as data, that Caroline's identity is ..."): a run of at least `_ECHO_WORDS` of the notice's
    words from its first two on, and a "that" after it. Loci's words, never the answer."""
    found = word_tokens(answer)
    run = 0
    while run < len(found) and stem(found[run][0]) in _NOTICE_STEMS:
        run += 1
    if run < _ECHO_WORDS or [stem(word) for word, *_ in found[:2]] != _NOTICE_OPENING:
        return answer
    return _THAT.sub("", answer[found[run - 1][2] :].lstrip(" ,.:;-"), count=1)


def _without_notice(material: str) -> str:
    """`material` without the notice that frames recalled notes: Loci's words, never the material's."""
    return material.replace(NOTICE, " ")


def answer_problem(answer: str, *, frame: str, material: str, cut_off: bool = False, task: str = "") -> str | None:
    """Why `answer` is not an answer, or None. `frame` is the prompt's own text, `material` what it shows,
    `task` the question (an answer that only restates it says nothing)."""
    text = answer.strip()
    if not text:
        return "the answer is empty: write what the task asks for"
    said = line_terms(text)
    if task and said and said <= line_terms(task):
        return "the answer only restates the task: say what the documents say"
    if task and (about := ABOUT_THE_TEXT.match(text)) and about.group(2).lower() not in task.lower():
        return "the answer describes the documents instead of answering from them: say what they say"
    if cut_off:
        return "the answer stops mid-sentence: write it whole and short"
    if re.fullmatch(r"<[^<>]*>?", text):
        return f"the answer {text!r} is a placeholder, not an answer: write the real answer"
    for placeholder in PLACEHOLDER.findall(frame):
        if placeholder in material:  # an address the material writes in brackets, `<jseward@bzip.org>`
            continue
        if placeholder[:-1].lower() in text.lower():
            return f"the answer copies the placeholder {placeholder} from the prompt: write the real answer"
    flat_frame, flat_material = _flat(frame), _flat(_without_notice(material))
    for sentence in [text, *re.split(r"(?<=[.!?])\s+", text)]:
        flat = _flat(sentence)
        if len(flat) >= MIN_ECHO_CHARS and flat in flat_frame and flat not in flat_material:
            return f"the answer repeats the prompt's own words ({sentence[:80]!r}): answer from the documents"
    return None


def claims(answer: str) -> list[str]:
    """What an answer asserts that a line must hold: its quoted phrases, options (`-S`), numbers, dates,
    identifiers and names, in order (a quoted phrase and an option as they are, the rest as single words)."""
    found = [m.group(1).strip() for m in QUOTED.finditer(answer)]
    found += OPTION.findall(QUOTED.sub(" ", answer))
    for sentence in sentences(QUOTED.sub(" ", answer)):
        runs = [run.strip("-_.") for run in _RUN.findall(sentence)]
        runs = [run for run in runs if run]
        for index, run in enumerate(runs):
            if any(c.isdigit() for c in run) or "_" in run or "." in run or _CAMEL.search(run):
                found.append(run)
            elif run[0].isupper() and run.casefold() not in STOP_WORDS and len(run) > 1:
                following = runs[index + 1] if index + 1 < len(runs) else ""
                if index or following[:1].isupper():
                    found.append(run)
    return list(dict.fromkeys(found))


def ungrounded(
    answer: str, shown: Lines | str, question: str = "", *, ranked: str | None = None, chosen: Sequence[str] = ()
) -> list[str]:
    """The claims of `answer` that are on no line of `shown` and not in `question`: [] when it stands. A
    claim must be on a line about the question, when some line shown holds a word of it (a small number is
    on some line of any file, and a name on the next line is another person's): a document line (numbered
    `N| text`) that answers the question about as well as the best document line does, or another line
    (the run's own turns and results) that holds a word of the question. A number counts only whole (not
    the 1 of `HTTP/1.1`). Lines are ranked for `ranked` when given (the question without the words that name
    its documents, `runtime.prompt.topic`), and a claim the question says needs no line. `shown` is the lines
    typed (`runtime.prompt.shown.Lines`), or text that came in as text (read with `Lines.parse`). `chosen`: the
    texts of the lines the answer was read off as a span, about the question by the rule that chose them."""
    lines = _typed(shown)
    said = (row.text if isinstance(row, ShownLine) else NUMBERED.sub("", row) for row in lines.items)
    text = "\n".join(said) + "\n" + question
    flat = _flat(text)
    about = _about(lines, ranked or question, whole=without_notes(question)) if question else None
    if about is not None or chosen:
        about = [*(about or []), *chosen]
    in_question = set(words(question))
    missing = []
    for claim in claims(answer):
        if " " in claim or not _RUN.fullmatch(claim):
            if _flat(claim) not in flat:
                missing.append(claim)
        elif not _holds(text, claim) or (
            about is not None and claim.casefold() not in in_question and not any(_holds(line, claim) for line in about)
        ):
            missing.append(claim)
    return missing


def about_lines(shown: Lines | str, question: str, *, whole: str = "") -> list[str]:
    """The texts of the lines of `shown` about the question, as `ungrounded` weighs them (`_about`)."""
    return _about(_typed(shown), question, whole=whole) or []


def _about(shown: Lines, question: str, *, whole: str = "") -> list[str] | None:
    """The lines of `shown` about the question: the document lines whose BM25 score for its words is at
    least `ANSWERING` of the best document line's, and the other lines that hold one of its words; None when
    no line holds a word of it. `whole`: the question with the words naming its documents (`meant_names`)."""
    unwanted = negated(question)
    asked = set(content_terms(question)) - unwanted
    ranker = Ranker(asked)
    rows: list[tuple[str, set[str]]] = []
    others: list[str] = []
    numbers: list[int] = []
    for line in shown.items:
        if isinstance(line, ShownLine):
            numbers.append(line.number)
            rows.append((line.text, ranker.held(line.text)))
            ranker.count(line.text, rows[-1][1])
        elif line_terms(line) & asked and not HEADER.match(line):  # a header names lines, it states nothing
            others.append(line)
    words_asked = _question_words(question, asked)
    scores = [0.0 if unwanted & line_terms(row) else _score(ranker, row, terms, words_asked) for row, terms in rows]
    best = max(scores, default=0.0)
    about = [row for (row, _), score in zip(rows, scores, strict=True) if best > 0 and score >= ANSWERING * best]
    # the line that assigns a name the question asks about is about it, however its words rank (`BPF = 53  #
    # Number of bits in a float`, beside `RECIP_BPF = 2 ** -BPF` for "What is the value of BPF in random?")
    meant = meant_names(question, [row for row, _ in rows], whole=whole)
    about += [row for row, _ in rows if row not in about and any(definition(row, name) for name in meant)]
    # so is the line of a manual that defines an option the question names (`-C, --directory=DIR` for "Which
    # tar option is --directory?")
    named = set(OPTION.findall(question))
    about += [row for row, _ in rows if row not in about and named & set(options(row))]
    # and the line that opens the section the question names (`8. Litigation` for "What's section 8 called?")
    if number := section(question):
        about += [row for row, _ in rows if row not in about and heading(row, number)]
    # and the lines indented under a line about it (a changelog entry's items and sign-off under its header)
    texts = [row for row, _ in rows]
    about += [texts[j] for i, row in enumerate(texts) if row in about for j in under(texts, numbers, i)]
    return about + others if about or others else None


def under(texts: list[str], numbers: list[int], at: int, most: int = BLOCK_LINES) -> list[int]:
    """The indexes of the lines shown right after line `at` (consecutive numbers) that are indented deeper
    than it, blank lines aside, up to the first that is not: its block (a Debian changelog entry's items and
    sign-off under `sed (4.7-1) unstable; urgency=medium`, a manual's description under `-C, --directory=DIR`)."""
    found: list[int] = []
    for j in range(at + 1, min(len(texts), at + 1 + most)):
        if numbers[j] != numbers[j - 1] + 1:
            break
        if texts[j].strip():
            if not deeper(texts[j], texts[at]):
                break
            found.append(j)
    return found


def deeper(line: str, head: str) -> bool:
    """Whether `line` is indented deeper than `head` (tabs as 8 columns)."""
    return _indent(line) > _indent(head)


def _indent(text: str) -> int:
    return len(text.expandtabs(8)) - len(text.expandtabs(8).lstrip())


def _question_words(question: str, asked: set[str]) -> list[set[str]]:
    """The question's terms grouped by the word they come from: an identifier with its parts (`TextWrapper`:
    `textwrapp`, `text`, `wrapper`), each term in the first word that gives it."""
    groups: list[set[str]] = []
    seen: set[str] = set()
    for run in _RUN.findall(question):
        group = (line_terms(run) & asked) - seen
        if group:
            groups.append(group)
            seen |= group
    return groups


def _score(ranker: Ranker, row: str, held: set[str], groups: list[set[str]]) -> float:
    """The line's BM25 score with each question word counted once: a word given in parts (`TextWrapper`:
    `textwrapp`, `text`, `wrapper`) adds its weightiest part the line holds, times the share of its parts the
    line holds. "class TextWrapper:" then does not outrank "The default width is 70 columns" for "What is
    the default width of TextWrapper?" three times over, and `DEFAULT_FORMAT = PAX_FORMAT` still outranks
    `PAX_FORMAT = 2` for "What is DEFAULT_FORMAT?"."""
    plain = sum(ranker.weight(term) for term in held)
    if not plain:
        return 0.0
    grouped = set().union(*groups) if groups else set()
    counted = sum(ranker.weight(term) for term in held - grouped)
    for group in groups:
        if on_line := held & group:
            counted += max(ranker.weight(term) for term in on_line) * len(on_line) / len(group)
    return ranker.score(row, held) * counted / plain


def negated(question: str) -> set[str]:
    """The terms the question asks to be without ("Which port ... without SSL?": `ssl`): a line that holds one
    is not about it."""
    return set(content_terms(" ".join(NEGATED.findall(question))))


def scored_rows(shown: Lines | str, question: str) -> list[tuple[str, int, str, float]]:
    """The document lines of `shown` (of a named document), in the order shown, as (document, line number,
    text, score): each line's BM25 score for the question's words, over the document lines shown (0 for a line
    that holds a word the question asks to be without, `negated`)."""
    unwanted = negated(question)
    ranker = Ranker(set(content_terms(question)) - unwanted)
    rows: list[tuple[str, int, str, set[str]]] = []
    for line in _typed(shown).rows():
        if line.document:
            rows.append((line.document, line.number, line.text, ranker.held(line.text)))
            ranker.count(line.text, rows[-1][3])
    return [
        (ref, number, text, 0.0 if unwanted & line_terms(text) else ranker.score(text, held))
        for ref, number, text, held in rows
    ]


def _holds(text: str, claim: str) -> bool:
    """Whether `text` holds `claim`: a number as a whole number, anything else as a word or its stem."""
    if _NUMBER.fullmatch(claim):
        return claim in {run.strip("-_.") for run in _RUN.findall(text)}
    if OPTION.fullmatch(claim):
        return claim in OPTION.findall(text)
    return claim.casefold() in words(text) or stem(claim) in line_terms(text)


def supporting_line(answer: str, shown: Lines | str, question: str) -> tuple[str, int, str] | None:
    """The line shown (as `id`, number, text) that holds the most of the answer's claims that do stand (on a
    line with a word of the question, and not the question's own); None when no line holds one."""
    asked, in_question = set(content_terms(question)), set(words(question))
    said = [c for c in claims(answer) if _RUN.fullmatch(c) and c.casefold() not in in_question]
    best: tuple[int, str, int, str] | None = None
    for row in _typed(shown).rows():
        if not row.document:
            continue
        terms, held = line_terms(row.text), set(words(row.text))
        if not terms & asked:
            continue
        count = sum(1 for c in said if c.casefold() in held or stem(c) in terms)
        if count and (best is None or count > best[0]):
            best = (count, row.document, row.number, row.text)
    return best[1:] if best else None


def _typed(shown: Lines | str) -> Lines:
    """`shown` as typed lines: text given as text, numbered as the prompt numbers lines, read once."""
    return shown if isinstance(shown, Lines) else Lines.parse(shown)


async def locate_evidence(
    contexts: ContextStore, answer: str, ids: list[str], question: str = ""
) -> list[dict[str, Any]]:
    """The one line of the documents `ids` that holds the most of `answer`'s claims, then of its words, among
    the lines found that hold a word of `question` when some do; [] when no such line holds a claim, or (for
    an answer without claims of its own, beyond the question's) more than half of its own words, those not in
    `question`."""
    terms = line_terms(answer)
    own = terms - line_terms(question) or terms
    said = {claim.casefold() for claim in claims(answer) if _RUN.fullmatch(claim)} - set(words(question))
    if not terms or not ids:
        return []
    try:
        hits = await contexts.search(" ".join(content_words(answer)), ids=ids, k=3)
    except UsageError:
        return []
    asked = set(content_terms(question))
    found: list[tuple[tuple[int, int], str, int, bool]] = []
    for hit in hits:
        span = await contexts.read(hit.id, hit.start_line, hit.end_line, max_tokens=2_000)
        for number, line in enumerate(span.text.split("\n"), start=span.start_line):
            held = line_terms(line) | set(words(line))
            found.append(((len(said & held), len(own & held)), hit.id, number, bool(held & asked)))
    # when a line found is about the question, the evidence is one that is: "a cookie with no value", beside
    # a line that names http.cookiejar, does not say what EPOCH_YEAR is
    about = any(on_question for *_, on_question in found)
    best: tuple[tuple[int, int], str, int] | None = None
    for score, ref, number, on_question in found:
        if any(score) and (on_question or not about) and (best is None or score > best[0]):
            best = (score, ref, number)
    if best is None or (not best[0][0] and 2 * best[0][1] <= len(own)):
        return []
    return [{"id": best[1], "start": best[2], "end": best[2]}]


def _flat(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9<>]+", text.lower()))
