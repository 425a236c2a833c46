"""Whether a digest job's answer may say `done`: it rests on its evidence and does not repeat itself.

A job that read every chunk and got a reply is not yet a job that answered.
`judge` looks at the answer beside the text of its evidence and returns the
answer (cut at its first repeat) with a status and a reason:

- an answer that repeats itself (a sentence, a line, or a run of
  `REPEAT_WORDS` words said twice) is cut where the repeat starts, and is
  `partial`: a small model that loops has lost the thread;
- for a lookup (`lookup`: not a question about the whole document), evidence
  that holds fewer than half of the question's content words (the words
  left when the stop words are dropped, `runtime.digest.lexical`) cannot be
  where the answer was read: `partial`, naming the missing words;
- an answer that says the document does not say is not an answer: `partial`;
- an answer none of whose own words (those not in the question) is in its
  evidence was not read there: `partial`;
- an answer with a name, number, identifier or quoted phrase that its
  evidence does not hold is not grounded: `partial`, naming them (the one
  check of an answer, `runtime.reading.judge.judge`, which `loci run` and
  `loci chat` decide with too; the evidence is text read back from the
  store, its lines plain lines, so the checks of a value against the lines
  shown do not apply).

Otherwise the job is `done`. The reasons are one line each, for the record's
`reason` and for `loci digest`'s "(partial: ...)" line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from loci.memory.context.store import ContextStore
from loci.memory.errors import LociError
from loci.memory.text.repeats import first_repeat
from loci.runtime.digest.lexical import content_words, line_words
from loci.runtime.prompt.shown import Lines
from loci.runtime.reading import judge as answer_check

__all__ = ["Verdict", "cut_repeat", "evidence_text", "judge"]

REPEAT_WORDS = 8
MIN_SENTENCE_CHARS = 12
EVIDENCE_TOKENS = 200_000
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
NOT_SAID = re.compile(
    r"\b(does not|doesn't|do not|don't|did not|cannot|can't)\s+(say|mention|state|tell|hold|contain|specify|know)"
    r"|\bnot (mentioned|stated|given|specified|found)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Verdict:
    answer: str
    status: str  # done or partial
    reason: str | None


def judge(question: str, answer: str, evidence: str, *, lookup: bool = True) -> Verdict:
    """The answer as it may be shown, and whether it is `done`; see the module docstring."""
    text, repeated = cut_repeat(answer.strip())
    reasons = ["the answer repeats itself (cut at the first repeat)"] if repeated else []
    wanted = content_words(question)
    held = line_words(evidence)
    if wanted and lookup:
        present = [w for w in wanted if w in held]
        if len(present) < math.ceil(len(wanted) / 2):
            missing = ", ".join(w for w in wanted if w not in held)
            reasons.append(
                f"its evidence holds {len(present)} of the question's {len(wanted)} content words (not: {missing})"
            )
    own = line_words(text) - set(wanted)
    if NOT_SAID.search(text):
        reasons.append("the answer says the document does not say")
    elif text and own and not own & held:
        reasons.append("none of the answer's own words is in its evidence: it was not read there")
    elif text and (missing := _grounding(text, evidence, question)):
        named = ", ".join(repr(claim) for claim in missing)
        reasons.append(f"not grounded: the answer says {named}, which its evidence does not")
    if not text:
        reasons.append("the model gave no answer")
    return Verdict(text, "partial" if reasons else "done", "; ".join(reasons) or None)


def _grounding(answer: str, evidence: str, question: str) -> tuple[str, ...]:
    """The claims of `answer` (at most four) that its evidence does not hold, by the one check of an answer."""
    shown = answer_check.Shown(Lines.of(evidence), question, values=False)
    return answer_check.judge(answer, shown).missing[:4]


def cut_repeat(text: str) -> tuple[str, bool]:
    """`text` up to where it starts repeating itself (a sentence, or a run of `REPEAT_WORDS` words: the one repeat
    check, `memory.text.repeats`), and whether it did."""
    said = list(_SENTENCE.finditer(text))
    if (at := first_repeat([match.group() for match in said], min_chars=MIN_SENTENCE_CHARS)) is not None:
        return text[: said[at].start()].rstrip(), True
    words = list(re.finditer(r"\S+", text))
    runs = [" ".join(w.group() for w in words[at : at + REPEAT_WORDS]) for at in range(len(words) - REPEAT_WORDS + 1)]
    if (at := first_repeat(runs, key=str.casefold)) is not None:
        return text[: words[at].start()].rstrip(), True
    return text, False


async def evidence_text(contexts: ContextStore, evidence: Sequence[dict[str, Any]]) -> str:
    """The text the evidence names: quoted lines as they are, ranges read from the store (bounded)."""
    parts, budget = [], EVIDENCE_TOKENS
    for item in evidence:
        if item.get("quote"):
            parts.append(item["quote"])
            continue
        if budget <= 0:
            break
        try:
            span = await contexts.read(item["id"], item["start"], item["end"], max_tokens=budget)
        except LociError:
            continue
        parts.append(span.text)
        budget -= max(1, span.end_token - span.start_token)
    return "\n".join(parts)
