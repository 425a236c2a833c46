"""The scoring of the real-file set: right answers over every phrasing, and over each fact's worst one.

An answer is right when it holds the expected span: an option or format
sequence (one token that starts with a sign: `-S`, `%j`) as that exact token,
case kept (`-s` is not `-S`); anything else as whole words after LoCoMo's
normalising (`bench.qa.locomo.contains`: "2" is not in "27").

Per arm the report gives the share of questions right, the facts right in
every phrasing (and so the share of facts whose worst phrasing is right), the
share right per style of phrasing and per kind of file, and the median
seconds; for `loci` also the answers that said `done` while wrong and the
right answers called `partial`, as counts and as shares of the questions,
and its median seconds over rag's. Each fact's wrong phrasings are listed in
`{name}_facts_detail`, each answer in `{name}_answers`.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from loci.bench.qa.files_data import FileQuestion
from loci.bench.qa.locomo import contains

__all__ = ["Outcome", "is_right", "report"]

_SIGNED = re.compile(r"^[-%+]\S*$")


@dataclass(frozen=True)
class Outcome:
    """One arm's answer to one phrasing."""

    question: FileQuestion
    arm: str
    answer: str
    status: str
    seconds: float

    @property
    def right(self) -> bool:
        return is_right(self.answer, self.question.answer)


def is_right(answer: str, gold: str) -> bool:
    """Whether `answer` holds the span `gold` (an option as that exact token, else as whole words)."""
    if _SIGNED.match(gold):
        return re.search(rf"(?<![\w-]){re.escape(gold)}(?![\w-])", answer) is not None
    return contains(answer, gold)


def _share(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


def _fact_key(index: int, q: FileQuestion) -> int:
    return q.fact if q.fact >= 0 else -1 - index  # a question without a fact is a fact of its own


def _facts(outcomes: list[Outcome]) -> dict[int, list[Outcome]]:
    facts: dict[int, list[Outcome]] = {}
    for index, outcome in enumerate(outcomes):
        facts.setdefault(_fact_key(index, outcome.question), []).append(outcome)
    return facts


def _by(outcomes: Iterable[Outcome], attribute: str) -> dict[str, float]:
    groups: dict[str, list[bool]] = {}
    for outcome in outcomes:
        groups.setdefault(getattr(outcome.question, attribute), []).append(outcome.right)
    return {key: _share(sum(rights), len(rights)) for key, rights in groups.items()}


def _arm(prefix: str, arm: str, outcomes: list[Outcome]) -> dict[str, Any]:
    n = len(outcomes)
    right = sum(o.right for o in outcomes)
    facts = _facts(outcomes)
    all_right = [key for key, asked in facts.items() if all(o.right for o in asked)]
    kinds: dict[str, dict[str, Any]] = {}
    for asked in facts.values():
        entry = kinds.setdefault(asked[0].question.kind, {"facts": 0, "facts_all_right": 0, "right": 0, "n": 0})
        entry["facts"] += 1
        entry["facts_all_right"] += all(o.right for o in asked)
        entry["right"] += sum(o.right for o in asked)
        entry["n"] += len(asked)
    for entry in kinds.values():
        entry["acc"] = _share(entry["right"], entry["n"])
    by_style = _by(outcomes, "style")
    p = f"{prefix}_{arm}"
    report: dict[str, Any] = {
        f"{p}_acc": _share(right, n),
        f"{p}_right": right,
        f"{p}_facts_all_right": len(all_right),
        f"{p}_facts_all_right_share": _share(len(all_right), len(facts)),
        f"{p}_by_style": by_style,
        f"{p}_worst_style": min(by_style, key=lambda style: by_style[style]) if by_style else "",
        f"{p}_by_kind": kinds,
        f"{p}_s_median": round(statistics.median(o.seconds for o in outcomes), 2) if outcomes else 0.0,
    }
    if arm == "loci":
        done_wrong = sum(o.status == "done" and not o.right for o in outcomes)
        right_partial = sum(o.status == "partial" and o.right for o in outcomes)
        report |= {
            f"{p}_done_wrong": done_wrong,
            f"{p}_done_wrong_share": _share(done_wrong, n),
            f"{p}_right_partial": right_partial,
            f"{p}_right_partial_share": _share(right_partial, n),
        }
    return report


def report(prefix: str, questions: list[FileQuestion], rows: dict[str, list[Outcome]]) -> dict[str, Any]:
    """The flat `{prefix}_*` keys of one set answered on the arms of `rows` (each in `questions`' order)."""
    facts = {_fact_key(i, q) for i, q in enumerate(questions)}
    kinds: dict[str, set[int]] = {}
    for i, q in enumerate(questions):
        kinds.setdefault(q.kind, set()).add(_fact_key(i, q))
    out: dict[str, Any] = {
        f"{prefix}_n": len(questions),
        f"{prefix}_facts": len(facts),
        f"{prefix}_files": len({q.file for q in questions}),
        f"{prefix}_kinds": {kind: len(numbers) for kind, numbers in kinds.items()},
    }
    for arm, outcomes in rows.items():
        out |= _arm(prefix, arm, outcomes)
    if rows.get("loci") and rows.get("rag"):
        loci, rag = (statistics.median(o.seconds for o in rows[arm]) for arm in ("loci", "rag"))
        out[f"{prefix}_loci_rag_s_ratio"] = round(loci / rag, 2) if rag > 0 else None
    out[f"{prefix}_facts_detail"] = _detail(rows)
    out[f"{prefix}_answers"] = [
        {
            "arm": o.arm,
            "file": o.question.file.name,
            "style": o.question.style,
            "question": o.question.question,
            "gold": o.question.answer,
            "answer": o.answer[:160],
            "status": o.status,
            "right": o.right,
            "s": round(o.seconds, 2),
        }
        for outcomes in rows.values()
        for o in outcomes
    ]
    return out


def _detail(rows: dict[str, list[Outcome]]) -> list[dict[str, Any]]:
    """Per fact: its file, answer and kind, and per arm how many phrasings were right and which were wrong."""
    detail: dict[int, dict[str, Any]] = {}
    for arm, outcomes in rows.items():
        for key, asked in _facts(outcomes).items():
            q = asked[0].question
            entry = detail.setdefault(key, {"file": q.file.name, "answer": q.answer, "kind": q.kind})
            entry[arm] = f"{sum(o.right for o in asked)}/{len(asked)}"
            entry[f"{arm}_wrong"] = [o.question.style for o in asked if not o.right]
    return list(detail.values())
