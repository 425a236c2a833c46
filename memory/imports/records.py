"""What every reader produces, and the helpers they share for naming bad input.

A reader turns one file into `Conversation`s: the turns (memory/graph/conversation.py
`Turn`, each with the transcript's own id as its `ref`), the tool calls and
results that went with them (`ToolRecord`, kept as context objects, not as
memories), and a `key` that names the conversation across versions of the
file (the format and the conversation's own id), which is what makes a
second import of the same or a longer file add only what is new.

Bad input is a `UsageError` that names the file and the line (or, in a JSON
document, the conversation and message) where it is, so a person can fix it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, NoReturn

from loci.memory.errors import UsageError
from loci.memory.graph.conversation import Turn
from loci.memory.graph.dates import parse_when
from loci.memory.json_input import loads

__all__ = ["Conversation", "ToolRecord", "bad", "json_lines", "load_json", "when_of"]


@dataclass(frozen=True)
class ToolRecord:
    """A tool call or result of a transcript: `ref` is its place in the transcript, `text` what it said."""

    ref: str
    text: str


@dataclass
class Conversation:
    """One conversation read from a file; `key` is the same for every version of it."""

    key: str
    title: str
    turns: list[Turn]
    tools: list[ToolRecord] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def bad(source: str, where: str, why: str) -> NoReturn:
    """Raise the one-line error for bad input at `where` (`line 12`, `conversation 3`) of `source`."""
    raise UsageError(f"{source} {where}: {why}")


def json_lines(text: str, source: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """`(line number, object)` for each non-blank line of a JSONL text; a line that is not an object is an error."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = loads(line)
        except ValueError as exc:
            bad(source, f"line {number}", f"not JSON ({exc})")
        if not isinstance(record, dict):
            bad(source, f"line {number}", "a line must be a JSON object")
        yield number, record


def load_json(text: str, source: str) -> Any:
    """The JSON document in `text`; a syntax error names its line, a document nested too deep says so."""
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        bad(source, f"line {exc.lineno}", f"not JSON ({exc.msg})")
    except ValueError as exc:
        raise UsageError(f"{source}: refused: {exc}") from None


def when_of(value: object) -> date | None:
    """The day a timestamp names: an ISO or spoken date string, or seconds since the epoch (UTC)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value, UTC).date()
        except (OverflowError, OSError, ValueError):
            return None
    return parse_when(value)
