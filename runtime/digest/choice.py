"""A lookup's answer, chosen from the lines its evidence lists.

`loci digest` on 2.2 MB of copyright files, asked "What is the source URL
of curl?", listed `line 7401: "Source: https://curl.se/"` among the lines it
found, and answered from a line about aopalliance: a small model, shown
eight lines that each hold a word of the question, wrote out the wrong one.

So `from_evidence` holds the answer to the found lines whose words of the
question weigh the most (`best_found`): the one line ranker's weights
(`memory.text.lines.Ranker`, BM25's inverse line frequency with no length
norm), counted by the scan over every line of the documents, so a word
counts less the more lines of the whole text hold it ("held" on one found
line of a licence's "Rights held by the Licensor" weighs less than "bzip2",
on six lines of a megabyte). A line found as the field that completes its
anchor's record (`runtime.digest.lexical`: `Copyright: 1996-2010 Julian R
Seward` four lines after `Upstream-Name: bzip2`) holds its anchor's words
too. A line that only names what is asked (`==> bzip2/copyright <==`: each
of its words is, or is part of, a word of the question) says nothing of
it, and is weighed only when no found line says anything.

An answer stands when the found line that holds the most of its own words
(those not in the question) is one of those lines: "https" is on every
line, "curl.se" on one; or a second hop from one of them, the line the
scan bridges to (a question word that line lacks, and a word of its own
they share): the aopalliance line adds no word of the question to the curl
line, so it is no hop. An answer that repeats itself (a small model that
writes the found lines out over and over) does not stand. Otherwise the
answer is chosen among those lines as `loci run` chooses a span
(runtime/reading/spans.py): the line the model's own likelihood prefers as
its whole reply to the same prompt, or, for a model that cannot score (a
remote one), the best of them by the scan's score. The `done` rule that
follows is the digest's (runtime/digest/verdict.py). The marks the prompt
numbers the lines with (`(doc:1 line 4)`), which a small model writes back
(an answer of eight marks and no words), are taken out first: an answer
that is only marks rests on no line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from loci.memory.text import Ranker
from loci.memory.text.words import RUN
from loci.runtime.digest.lexical import Found, content_words, line_words
from loci.runtime.digest.verdict import cut_repeat
from loci.runtime.models.base import Model, can_score

__all__ = ["MOST_LINES", "best_found", "from_evidence", "says"]

MOST_LINES = 8
LINE_CHARS = 300
# How the answer prompt numbers the found lines; a small model writes them back, alone or before a line.
# A mark the answer's token limit cut (`(doc:1 l`) is a mark too.
_MARK = re.compile(r"\((?:doc|obs|turn|note):\d*(?:\s+l(?:i(?:n(?:e)?)?)?)?\s*\d*\)?")


def best_found(found: Sequence[Found], question: str, counts: dict[str, Any] | None = None) -> list[Found]:
    """The found lines whose question words weigh the most, best scored first: BM25's weights with no length
    norm (the one ranker, `memory.text.lines.Ranker`), over the scan's counts of every line of the documents
    (`counts`), else over the found lines alone. A line's words are its anchor's too (the line before it whose
    question words it completes). A line that holds only words of the question names what is asked and says
    nothing of it (`==> bzip2/copyright <==`): it is weighed only when every found line is such a line."""
    wanted = set(content_words(question))
    ranker = Ranker.counted(wanted, counts or {}, b=0.0)
    at = {(line.doc, line.line): line for line in found}
    held = [ranker.held(line.text) for line in found]
    for line, terms in zip(found, held, strict=True):
        anchor = at.get((line.doc, line.anchor)) if line.anchor is not None else None
        if anchor is not None:
            terms |= ranker.held(anchor.text)
        if not counts:
            ranker.count(line.text, terms)
    weighed = [(line, round(ranker.score(line.text, terms), 9)) for line, terms in zip(found, held, strict=True)]
    saying = [(line, value) for line, value in weighed if says(line.text, wanted)]
    top = max((value for _, value in saying or weighed), default=0.0)
    lines = [line for line, value in saying or weighed if value == top and top > 0]
    return sorted(lines, key=lambda line: -line.score)[:MOST_LINES]


def says(text: str, wanted: set[str]) -> bool:
    """Whether `text` says something beside the question's words: one of its words (an identifier whole, with its
    parts) holds a content word and none of the question's. `==> bzip2-doc/copyright <==` only names what "Who holds
    the copyright of bzip2?" asks about; `Upstream-Name: bzip2` says what its name is."""
    return any((held := line_words(run)) and not held & wanted for run in RUN.findall(text))


def _hop(line: Found, best: Sequence[Found], wanted: set[str]) -> bool:
    """Whether `line` is a second hop from one of the `best` lines, as the scan bridges to one: it holds a word
    of the question that best line lacks, and shares with it a word the question does not say ("Velmora keeps
    the key to the amber vault"; "the amber vault is in Tarnhollow", asked in which city that key's room is)."""
    words = line_words(line.text)
    for first in best:
        held = line_words(first.text)
        if (words & wanted) - held and (words & held) - wanted:
            return True
    return False


async def from_evidence(
    model: Model,
    messages: list[dict[str, str]],
    question: str,
    answer: str,
    found: Sequence[Found],
    counts: dict[str, Any] | None = None,
) -> str:
    """`answer` when the found line holding most of its own words is one of the best; else the best line the
    model finds likeliest."""
    answer = " ".join(_MARK.sub(" ", answer).split()) if _MARK.search(answer) else answer
    best = best_found(found, question, counts)
    if not best:
        return answer
    wanted = set(content_words(question))
    own = line_words(answer) - wanted
    shared = [len(own & line_words(line.text)) for line in found]
    most = max(shared, default=0)
    rests_on = [line for line, count in zip(found, shared, strict=True) if count == most]
    if most and not cut_repeat(answer)[1] and any(line in best or _hop(line, best, wanted) for line in rests_on):
        return answer
    texts = [" ".join(line.text.split())[:LINE_CHARS] for line in best]
    if len(texts) == 1 or not can_score(model):
        return texts[0]
    scored = await model.score(messages, texts)  # type: ignore[attr-defined]
    chosen = max(range(len(texts)), key=lambda i: (scored[i].total + scored[i].end, -i))
    return texts[chosen]
