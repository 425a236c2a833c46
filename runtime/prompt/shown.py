"""The lines a model is shown, typed: each document line as its document, number and text.

Where the runtime shows documents (whole, `runtime.prompt.fit`; the lines a
look found, `runtime.reading.look`), it builds `Lines`: its document lines
as `ShownLine` rows, every other line (a document's header, the `...` of a
gap, a blank) as the text it is. The prompt gets `Lines.text`, the rows
numbered `N| text`; the answer check (`runtime.reading.judge`) reads the rows
themselves, so nothing parses the prompt back.

A tool's result comes in as text (it crossed MCP): `Lines.parse` reads its
document lines once, where it enters (`runtime.prompt.regions.Observation`),
as a document header (`doc:1 lines 3-9:`, `doc:1 name (lines 1-40):`) then
its numbered rows. It is the one reader of numbered text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["HEADER", "ROW", "Lines", "ShownLine"]

HEADER = re.compile(r"^(\w+:\d+) ")  # `doc:1 lines 3-9:` or `doc:1 name (lines 1-40):`
ROW = re.compile(r"^(\d+)\| ?(.*)$")


@dataclass(frozen=True)
class ShownLine:
    """One document line as shown: its document's id ("" when no header named it), number and text."""

    document: str
    number: int
    text: str

    def render(self) -> str:
        return f"{self.number}| {self.text}"


@dataclass(frozen=True)
class Lines:
    """Lines as shown, in order: document lines typed (`ShownLine`), every other line as its text."""

    items: tuple[ShownLine | str, ...] = ()

    @classmethod
    def of(cls, *parts: Lines | str) -> Lines:
        """The parts one after another, as `"\\n".join` would show them (a text part as its lines)."""
        items: list[ShownLine | str] = []
        for part in parts:
            items.extend(part.items if isinstance(part, Lines) else part.split("\n"))
        return cls(tuple(items))

    @classmethod
    def parse(cls, text: str) -> Lines:
        """The document lines of `text` that came in as text (a tool's result): a row after a document's
        header is that document's line; a row before any header, a line of no named document."""
        items: list[ShownLine | str] = []
        ref = ""
        for line in text.split("\n"):
            if header := HEADER.match(line):
                ref = header.group(1)
            if (row := ROW.match(line)) and not header:
                items.append(ShownLine(ref, int(row.group(1)), row.group(2)))
            else:
                items.append(line)
        return cls(tuple(items))

    @property
    def text(self) -> str:
        """The lines as the prompt shows them, rows numbered `N| text`."""
        return "\n".join(item.render() if isinstance(item, ShownLine) else item for item in self.items)

    def rows(self) -> Iterator[ShownLine]:
        """The document lines, in the order shown."""
        return (item for item in self.items if isinstance(item, ShownLine))

    def others(self) -> Iterable[str]:
        """Every line that is not a document line, in the order shown."""
        return (item for item in self.items if isinstance(item, str))

    def __bool__(self) -> bool:
        return bool(self.items)
