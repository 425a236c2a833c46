"""Evidence: the spans an answer rests on, checked against the context store.

An answer cites `{"id": "doc:1", "start": 3, "end": 9}` (lines, inclusive;
`start`/`end` optional for a whole object). The check refuses an id that does
not exist and a range outside the object, so a cited span is always one a
person can open; `loci run` prints the cited text under the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory.context import ContextStore
from memory.errors import UsageError

__all__ = ["Cited", "check_evidence"]

SHOWN_TOKENS = 200


@dataclass(frozen=True)
class Cited:
    id: str
    start: int
    end: int
    text: str


async def check_evidence(contexts: ContextStore, evidence: list[dict[str, Any]]) -> list[Cited]:
    """Resolve every cited span; raise `ValueError` naming the first that does not exist."""
    cited: list[Cited] = []
    seen: set[tuple[str, int | None, int | None]] = set()
    for item in evidence:
        key = (str(item.get("id", "")), item.get("start"), item.get("end"))
        if key in seen:
            continue
        seen.add(key)
        ref = str(item.get("id", ""))
        try:
            obj = await contexts.get(ref)
        except UsageError:
            raise ValueError(f"evidence cites {ref!r}, which does not exist") from None
        start = int(item.get("start") or 1)
        end = int(item.get("end") or max(obj.lines, 1))
        if not 1 <= start <= end <= max(obj.lines, 1):
            raise ValueError(f"evidence cites {ref} lines {start}-{end}, but {ref} has lines 1-{obj.lines}")
        text = (await contexts.read(ref, start, end, max_tokens=SHOWN_TOKENS)).text if obj.lines else ""
        cited.append(Cited(ref, start, end, text))
    return cited
