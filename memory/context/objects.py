"""The value types of the context store: objects, spans, hits and targets.

They are plain frozen dataclasses so that every layer (the store, the tools,
the runtime's evidence check) can pass them around and compare them without
touching SQLite. Ids are `kind:N`, where N is the row id of the object, so an
id never collides across kinds. A `Target` is how a caller names a part of
an object: an id, optionally followed by a line range (`doc:3:120-180`); it
is the unit of `context_ask`, `context_map` and of an answer's evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loci.memory.errors import NotFoundError, UsageError
from loci.memory.projects import DEFAULT_PROJECT

__all__ = ["KINDS", "UNITS", "ContextObject", "Hit", "Span", "Target", "parse_id"]

KINDS = ("doc", "obs", "turn", "note")
UNITS = ("lines", "tokens")


@dataclass(frozen=True)
class ContextObject:
    id: str
    kind: str
    name: str
    source: str | None
    chars: int
    lines: int
    tokens: int
    meta: dict[str, Any] = field(default_factory=dict)
    project: str = DEFAULT_PROJECT


@dataclass(frozen=True)
class Span:
    """A range of one object read back.

    `start`/`end` are in `unit` (1-based, inclusive) and say what was really
    returned, which may differ from what was asked: reads snap to whole lines
    and stop at a token budget. `truncated` says the budget cut the range;
    `next_start`, in `next_unit`, is where to continue (None at the end of
    the asked range). Both line and token ranges of the text are given.
    """

    id: str
    start: int
    end: int
    text: str
    truncated: bool = False
    unit: str = "lines"
    start_line: int = 0
    end_line: int = 0
    start_token: int = 0
    end_token: int = 0
    next_start: int | None = None
    next_unit: str = "lines"


@dataclass(frozen=True)
class Hit:
    """A search result: the chunk's line range, its best matching line (number and whole text), a snippet."""

    id: str
    start_line: int
    end_line: int
    snippet: str
    score: float
    line: int = 0
    line_text: str = ""


@dataclass(frozen=True)
class Target:
    """An object id with an optional 1-based inclusive line range: `doc:3` or `doc:3:120-180`."""

    id: str
    start: int | None = None
    end: int | None = None

    @classmethod
    def parse(cls, text: str) -> Target:
        ref = str(text).strip()
        kind, _, rest = ref.partition(":")
        number, _, span = rest.partition(":")
        parse_id(f"{kind}:{number}")
        if not span:
            return cls(f"{kind}:{number}")
        first, dash, last = span.partition("-")
        if not (span.isascii() and first.isdigit() and (not dash or last.isdigit())):
            raise UsageError(f"{ref!r} is not a target; write an id (doc:3) or an id and a line range (doc:3:120-180)")
        start = int(first)
        return cls(f"{kind}:{number}", start, int(last) if dash else start)

    def __str__(self) -> str:
        if self.start is None:
            return self.id
        return f"{self.id}:{self.start}-{self.end if self.end is not None else ''}"


def parse_id(ref: str) -> tuple[str, int]:
    """Split `doc:3` into `("doc", 3)`; a clear error for anything else."""
    kind, _, number = str(ref).partition(":")
    if kind not in KINDS or not (number.isascii() and number.isdigit()):
        shown = repr(ref) if len(repr(ref)) <= 40 else repr(ref)[:37] + "..."
        raise NotFoundError(f"{shown} is not a context id; ids look like doc:3, obs:42, turn:17 or note:5")
    if int(number) > 2**63 - 1:
        raise NotFoundError(f"no context object {kind}:{number}")
    return kind, int(number)
