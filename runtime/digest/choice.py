"""A lookup's answer, chosen from the lines its evidence lists.

`loci digest` on 2.2 MB of copyright files, asked "What is the source URL
of curl?", listed `line 7401: "Source: https://curl.se/"` among the lines it
found, and answered from a line about aopalliance: a small model, shown
eight lines that each hold a word of the question, wrote out the wrong one.

So `from_evidence` holds the answer to the found lines that hold the most of
the question's content words (`runtime.digest.lexical`, the scan's own
words), a word counting less the more found lines hold it: the curl line
holds "source" and "curl", the others "source" alone.
An answer stands when the found line that holds the most of its own words
(those not in the question) is one of those lines: "https" is on every
line, "curl.se" on one; or a second hop from one of them, the line the
scan bridges to (a question word that line lacks, and a word of its own
they share): the aopalliance line adds no word of the question to the curl
line, so it is no hop. Otherwise the answer is chosen among those lines as `loci run`
chooses a span (runtime/reading/spans.py): the line the model's own
likelihood prefers as its whole reply to the same prompt, or, for a model
that cannot score (a remote one), the best of them by the scan's score. The
`done` rule that follows is the digest's (runtime/digest/verdict.py). The
marks the prompt numbers the lines with (`(doc:1 line 4)`), which a small
model writes back (an answer of eight marks and no words), are taken out
first: an answer that is only marks rests on no line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from loci.runtime.digest.lexical import Found, content_words, line_words
from loci.runtime.models.base import Model, can_score

__all__ = ["MOST_LINES", "best_found", "from_evidence"]

MOST_LINES = 8
LINE_CHARS = 300
# How the answer prompt numbers the found lines; a small model writes them back, alone or before a line.
# A mark the answer's token limit cut (`(doc:1 l`) is a mark too.
_MARK = re.compile(r"\((?:doc|obs|turn|note):\d*(?:\s+l(?:i(?:n(?:e)?)?)?)?\s*\d*\)?")


def best_found(found: Sequence[Found], question: str) -> list[Found]:
    """The found lines that hold the most of the question's content words, best scored first. A word counts
    one over the number of found lines that hold it: "bzip2" on two lines says more than "copyright" on
    forty."""
    wanted = set(content_words(question))
    words = [wanted & line_words(line.text) for line in found]
    lines_with = Counter(word for held in words for word in held)
    weight = [round(sum(1 / lines_with[word] for word in held), 9) for held in words]
    top = max(weight, default=0.0)
    lines = [line for line, value in zip(found, weight, strict=True) if value == top and top > 0]
    return sorted(lines, key=lambda line: -line.score)[:MOST_LINES]


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
    model: Model, messages: list[dict[str, str]], question: str, answer: str, found: Sequence[Found]
) -> str:
    """`answer` when the found line holding most of its own words is one of the best; else the best line the
    model finds likeliest."""
    answer = " ".join(_MARK.sub(" ", answer).split()) if _MARK.search(answer) else answer
    best = best_found(found, question)
    if not best:
        return answer
    wanted = set(content_words(question))
    own = line_words(answer) - wanted
    shared = [len(own & line_words(line.text)) for line in found]
    most = max(shared, default=0)
    rests_on = [line for line, count in zip(found, shared, strict=True) if count == most]
    if most and any(line in best or _hop(line, best, wanted) for line in rests_on):
        return answer
    texts = [" ".join(line.text.split())[:LINE_CHARS] for line in best]
    if len(texts) == 1 or not can_score(model):
        return texts[0]
    scored = await model.score(messages, texts)  # type: ignore[attr-defined]
    chosen = max(range(len(texts)), key=lambda i: (scored[i].total + scored[i].end, -i))
    return texts[chosen]
