"""Evidence: the spans an answer rests on, checked against the context store.

An answer cites `{"id": "doc:1", "start": 3, "end": 9}` (lines, inclusive;
`start`/`end` optional for a whole object). The check refuses an id that does
not exist and a range outside the object, so a cited span is always one a
person can open; `loci run` prints the cited text under the answer.
`evidence_json` is the one way cited spans become JSON (a run record, a
result, a child's answer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from loci.memory.context.objects import Target
from loci.memory.context.store import ContextStore
from loci.memory.errors import InvalidAction, UsageError

__all__ = ["Cited", "check_evidence", "evidence_json"]

SHOWN_TOKENS = 200


@dataclass(frozen=True)
class Cited:
    id: str
    start: int
    end: int
    text: str


async def check_evidence(contexts: ContextStore, evidence: list[dict[str, Any]]) -> list[Cited]:
    """Resolve every cited span; raise `InvalidAction` naming the first that does not exist."""
    cited: list[Cited] = []
    seen: set[Target] = set()
    for item in evidence:
        start, end = item.get("start"), item.get("end")
        target = Target(str(item.get("id", "")), start if start is not None or end is None else 1, end)
        if target in seen:
            continue
        seen.add(target)
        try:
            obj = await contexts.check_target(target)
        except UsageError as exc:
            raise InvalidAction(f"evidence cites {target}: {exc}") from None
        first, last = target.start or 1, target.end or max(obj.lines, 1)
        text = (await contexts.read(obj.id, first, last, max_tokens=SHOWN_TOKENS)).text if obj.lines else ""
        cited.append(Cited(obj.id, first, last, text))
    return cited


def evidence_json(
    spans: Iterable[Cited | Target], *, names: Mapping[str, str] | None = None, text: bool = False
) -> list[dict[str, Any]]:
    """Cited spans as JSON: id, start, end; with `names`, each object's name; with `text`, the cited text."""
    found: list[dict[str, Any]] = []
    for span in spans:
        item: dict[str, Any] = {"id": span.id}
        if names is not None:
            item["name"] = names.get(span.id, "")
        item.update(start=span.start, end=span.end)
        if text:
            item["text"] = getattr(span, "text", "")
        found.append(item)
    return found
