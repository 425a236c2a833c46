"""Show what fits: documents whole in the prompt when they fit the model's context, navigation when not.

A small model answers a question about a short document best when it simply
sees the document; a navigation protocol costs it more than the document
does. So before the first turn, `plan_documents` measures the loaded
documents as the prompt would show them (an id header, then every line with
its number, so answers can cite lines they see) against the room the
model's own context leaves for them (`whole_room`): its whole window less
the reply, the chat template, the system text the run will show, the task,
and a least room (`MIN_REGION`) for each of the working state, the turns
and a tool's result. When they fit, the run is in `whole` mode: the task
region shows them and takes that room, and the other regions give up what
it takes, each in proportion to its share (`whole_sizes`). Otherwise the
run is in `navigate` mode and the task region lists the documents by id and
size, to be read with the tools.

The room is the model's context, not the task region's budget: on the
bundled GGUF (a 4,096-token window), a 72-line module of 923 tokens is shown
whole, where the budgets of a navigating run would leave it 914 tokens. A
small model reading its documents whole is given at most `READ_WHOLE_TOKENS`
of them (`runtime.loop.plan`): on the real-file set, a 135M model shown
2,000-3,000-token files whole (a copyright file, the Apache licence) was
wrong where its look at the best lines was right, and took ten times as
long on a CPU, every token of the prompt evaluated before the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from loci.memory.context.store import ContextObject, ContextStore
from loci.runtime.prompt.build import TEMPLATE_OVERHEAD, RegionSizes
from loci.runtime.prompt.shown import Lines, ShownLine

__all__ = [
    "MIN_REGION",
    "NAVIGATE",
    "READ_WHOLE_TOKENS",
    "WHOLE",
    "DocumentPlan",
    "number_lines",
    "plan_documents",
    "whole_room",
    "whole_sizes",
]

WHOLE = "whole"
NAVIGATE = "navigate"
MIN_REGION = 64  # the least room the state, the window and the observation each keep beside whole documents
READ_WHOLE_TOKENS = 1_536  # the most a small model reading documents whole is shown of them


@dataclass(frozen=True)
class DocumentPlan:
    """How a run shows its documents: `mode` is "whole" (with its `lines`) or "navigate"; `sizes` are the run's."""

    mode: str
    tokens: int
    room: int
    sizes: RegionSizes
    lines: Lines = Lines()

    @property
    def text(self) -> str:
        return self.lines.text

    def describe(self) -> str:
        relation = "fit in" if self.mode == WHOLE else "exceed"
        return f"mode={self.mode}: documents {self.tokens} tokens {relation} the {self.room}-token room"


def number_lines(obj: ContextObject, text: str, first: int = 1) -> Lines:
    """A document as the prompt shows it whole: a header with its id, then each line (`N| line`)."""
    lines = text.split("\n")
    header = f"{obj.id} {obj.name} (lines {first}-{first + len(lines) - 1}):"
    return Lines((header, *(ShownLine(obj.id, first + i, line) for i, line in enumerate(lines))))


def whole_room(sizes: RegionSizes, system_tokens: int, task_tokens: int) -> int:
    """The tokens whole documents may take: the model's window less the reply, the template, the system text,
    the task, and `MIN_REGION` for each of the state, the window and the observation."""
    used = TEMPLATE_OVERHEAD + sizes.reply + system_tokens + task_tokens + 3 * MIN_REGION
    return max(0, sizes.context_window - used)


def whole_sizes(sizes: RegionSizes, system_tokens: int, task_tokens: int) -> RegionSizes:
    """The sizes of a run that shows `task_tokens` of task and documents: the task region takes them, the
    system region keeps its text, and the state, window and observation share what is left, each at most its
    own size and in proportion to it."""
    system = min(sizes.system, system_tokens)
    task = max(sizes.task, task_tokens)
    left = sizes.context_window - TEMPLATE_OVERHEAD - sizes.reply - system - task
    others = sizes.state + sizes.window + sizes.observation
    share = min(1.0, left / others) if others else 0.0
    state, window = int(sizes.state * share), int(sizes.window * share)
    observation = min(sizes.observation, left - state - window)
    return replace(sizes, system=system, task=task, state=state, window=window, observation=observation)


async def plan_documents(
    contexts: ContextStore,
    objects: list[ContextObject],
    sizes: RegionSizes,
    task_tokens: int,
    count: Callable[[str], int],
    system_tokens: int,
    most: int | None = None,
) -> DocumentPlan:
    """Whole when every document, numbered, fits the room the model's window leaves (`whole_room`, with the
    system text of `system_tokens`), and `most` tokens when given; navigate otherwise."""
    room = whole_room(sizes, system_tokens, task_tokens)
    room = room if most is None else min(room, most)
    total = sum(obj.tokens for obj in objects)
    if not objects or total > room:
        return DocumentPlan(NAVIGATE, total, room, sizes)
    parts: list[Lines | str] = []
    for obj in objects:
        if obj.lines == 0:
            continue
        span = await contexts.read(obj.id, 1, obj.lines, max_tokens=room + 1)
        if span.truncated:
            return DocumentPlan(NAVIGATE, total, room, sizes)
        if parts:
            parts.append("")  # a blank line between two documents
        parts.append(number_lines(obj, span.text))
    lines = Lines.of(*parts)
    tokens = count(lines.text)
    if tokens > room:
        return DocumentPlan(NAVIGATE, tokens, room, sizes)
    return DocumentPlan(WHOLE, tokens, room, whole_sizes(sizes, system_tokens, tokens + task_tokens), lines)
