"""Reading loaded documents as chunks of at most N tokens, from any position.

The context store already holds each document as stored chunks of whole
lines with their token counts (`memory.context.loader`). A digest chunk is a run of
consecutive stored chunks whose tokens add up to at most N; a stored chunk
larger than N (a small N, a very long line) is cut into parts by lines, and
a line into pieces by tokens. Digest chunks never span two documents.

A `Position` (document, stored chunk, part) names where a chunk starts.
Grouping from a position is deterministic, so a job that saves the position
after each chunk and resumes from it reads exactly the chunks it had not
read. Rows are fetched a few hundred at a time, so memory does not grow with
the document.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass

import sqlite_utils

from loci.memory.context.loader import split_lines
from loci.memory.context.store import ContextObject, parse_id
from loci.memory.engines.base import Engine
from loci.runtime.prompt.build import fit

__all__ = ["Piece", "Position", "pieces"]

FETCH_ROWS = 256


@dataclass(frozen=True, order=True)
class Position:
    doc: int = 0
    seq: int = 0
    part: int = 0

    def as_json(self) -> list[int]:
        return [self.doc, self.seq, self.part]

    @classmethod
    def from_json(cls, value: Sequence[int] | None) -> Position:
        return cls(*value) if value else cls()


@dataclass(frozen=True)
class Piece:
    """One digest chunk: lines `start_line..end_line` of document `doc`, `tokens` tokens."""

    doc: int
    start: Position
    end: Position
    start_line: int
    end_line: int
    tokens: int
    text: str


@dataclass(frozen=True)
class _Unit:
    position: Position
    start_line: int
    end_line: int
    tokens: int
    text: str


async def pieces(
    store: Engine, objects: Sequence[ContextObject], start: Position, max_tokens: int, count: Callable[[str], int]
) -> AsyncIterator[Piece]:
    """The digest chunks of `objects` from `start` on, each at most `max_tokens` tokens."""
    for doc in range(start.doc, len(objects)):
        first = start if doc == start.doc else Position(doc)
        group: list[_Unit] = []
        async for unit in _units(store, objects[doc], first, max_tokens, count):
            if group and sum(u.tokens for u in group) + unit.tokens > max_tokens:
                yield _piece(doc, group, unit.position)
                group = []
            group.append(unit)
        if group:
            yield _piece(doc, group, Position(doc + 1))


def _piece(doc: int, group: list[_Unit], end: Position) -> Piece:
    text = "".join(u.text for u in group)
    tokens = sum(u.tokens for u in group)
    return Piece(doc, group[0].position, end, group[0].start_line, group[-1].end_line, tokens, text)


async def _units(
    store: Engine, obj: ContextObject, start: Position, max_tokens: int, count: Callable[[str], int]
) -> AsyncIterator[_Unit]:
    number = parse_id(obj.id)[1]
    seq = start.seq
    sql = (
        "SELECT seq, start_line, end_line, start_token, end_token, text FROM context_chunks"
        " WHERE object_id = ? AND seq >= ? ORDER BY seq LIMIT ?"
    )
    while True:
        rows = await store.read(lambda db, seq=seq: _fetch(db, sql, [number, seq, FETCH_ROWS]))
        for row_seq, start_line, end_line, start_token, end_token, text in rows:
            tokens = end_token - start_token
            if tokens <= max_tokens:
                if row_seq > start.seq or start.part == 0:
                    yield _Unit(Position(start.doc, row_seq, 0), start_line, end_line, tokens, text)
                continue
            for part, unit in enumerate(_split(text, start_line, max_tokens, count)):
                if row_seq > start.seq or part >= start.part:
                    yield _Unit(Position(start.doc, row_seq, part), *unit)
        if len(rows) < FETCH_ROWS:
            return
        seq = rows[-1][0] + 1


def _fetch(db: sqlite_utils.Database, sql: str, params: list[int]) -> list[tuple[int, int, int, int, int, str]]:
    return list(db.execute(sql, params).fetchall())


def _split(text: str, line: int, max_tokens: int, count: Callable[[str], int]) -> Iterator[tuple[int, int, int, str]]:
    """Parts of a stored chunk too large for one digest chunk: whole lines, and pieces of a line too long."""
    buffer: list[str] = []
    size = first = last = 0
    for piece in _line_pieces(text, max_tokens, count):
        tokens = count(piece)
        if buffer and size + tokens > max_tokens:
            yield first, last, size, "".join(buffer)
            buffer, size = [], 0
        if not buffer:
            first = line
        buffer.append(piece)
        size += tokens
        last = line
        line += piece.endswith("\n")
    if buffer:
        yield first, last, size, "".join(buffer)


def _line_pieces(text: str, max_tokens: int, count: Callable[[str], int]) -> Iterator[str]:
    for line in split_lines(text):
        while line:
            head, _ = fit(line, max_tokens, count)
            head = head or line[:1]  # a single character over the budget still moves on
            yield head
            line = line[len(head) :]
