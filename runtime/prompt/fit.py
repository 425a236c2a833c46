"""Show what fits: documents whole in the prompt when they fit, navigation when they do not.

A small model answers a question about a short document best when it simply
sees the document; a navigation protocol costs it more than the document
does. So before the first turn, `plan_documents` measures the loaded
documents as the prompt would show them (an id header, then every line with
its number, so answers can cite lines they see) against the room the budgets
leave for them: the task region plus half of the window region, which is
empty until the first tool call. When they fit, the run is in `whole` mode:
the task region shows them and takes that room (the window region gives up
what it lends). Otherwise the run is in `navigate` mode and the task region
lists the documents by id and size, to be read with the tools.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from memory.context.store import ContextObject, ContextStore
from runtime.prompt.build import RegionSizes

__all__ = ["NAVIGATE", "WHOLE", "DocumentPlan", "number_lines", "plan_documents"]

WHOLE = "whole"
NAVIGATE = "navigate"


@dataclass(frozen=True)
class DocumentPlan:
    """How a run shows its documents: `mode` is "whole" (with `text`) or "navigate"; `sizes` are the run's."""

    mode: str
    tokens: int
    room: int
    sizes: RegionSizes
    text: str = ""

    def describe(self) -> str:
        relation = "fit in" if self.mode == WHOLE else "exceed"
        return f"mode={self.mode}: documents {self.tokens} tokens {relation} the {self.room}-token room"


def number_lines(obj: ContextObject, text: str, first: int = 1) -> str:
    """A document as the prompt shows it whole: a header with its id, then `N| line` per line."""
    lines = text.split("\n")
    body = "\n".join(f"{first + i}| {line}" for i, line in enumerate(lines))
    return f"{obj.id} {obj.name} (lines {first}-{first + len(lines) - 1}):\n{body}"


async def plan_documents(
    contexts: ContextStore,
    objects: list[ContextObject],
    sizes: RegionSizes,
    task_tokens: int,
    count: Callable[[str], int],
) -> DocumentPlan:
    """Whole when every document, numbered, fits the room the budgets leave; navigate otherwise."""
    room = max(0, sizes.task + sizes.window // 2 - task_tokens)
    total = sum(obj.tokens for obj in objects)
    if not objects or total > room:
        return DocumentPlan(NAVIGATE, total, room, sizes)
    parts = []
    for obj in objects:
        if obj.lines == 0:
            continue
        span = await contexts.read(obj.id, 1, obj.lines, max_tokens=room + 1)
        if span.truncated:
            return DocumentPlan(NAVIGATE, total, room, sizes)
        parts.append(number_lines(obj, span.text))
    text = "\n\n".join(parts)
    tokens = count(text)
    if tokens > room:
        return DocumentPlan(NAVIGATE, tokens, room, sizes)
    lent = max(0, tokens + task_tokens - sizes.task)
    return DocumentPlan(WHOLE, tokens, room, replace(sizes, task=sizes.task + lent, window=sizes.window - lent), text)
