"""Reading a range of an object back, by lines or by tokens, within a budget.

The store keeps chunks, not lines, so a read walks the chunks that overlap
the range (found through an index on their last line or last token) and
splits them into pieces: whole lines, or the parts of a line too long for
one chunk. Each piece gets a token range: the chunk's own range, divided
among its lines by counting each line. Reads by tokens therefore snap to
whole lines, and say which tokens they really cover; only inside a long
piece (a fragment of a line longer than a chunk) is a token position placed
by characters, in proportion, so that a read can start or stop mid-line.

The budget is counted in tokens. A read that would exceed it stops at the
last whole piece that fits and reports the cut (`truncated`) and where to go
on (`next_start`, in lines when the cut falls between lines, in tokens when
it falls inside a long line). A single piece larger than the budget is cut
by characters, so no read ever returns more than the budget.

These functions are synchronous: they run inside a store's `read`, on either
engine. The chunks are read a few at a time (`PAGE_CHUNKS`), since a read
stops after the chunks its budget allows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from loci.memory.context.loader import split_lines
from loci.memory.context.objects import Span

__all__ = ["Piece", "iter_lines", "iter_pieces", "read_span"]

MIN_CUT_TOKENS = 16

PAGE_CHUNKS = 8  # chunks read at a time: a read within its budget needs one or two
_BY_LINE = (
    "SELECT seq, start_line, start_token, end_token, text FROM context_chunks"
    " WHERE object_id = ? AND end_line >= ? ORDER BY end_line, seq LIMIT ?"
)
_BY_TOKEN = (
    "SELECT seq, start_line, start_token, end_token, text FROM context_chunks"
    " WHERE object_id = ? AND end_token > ? ORDER BY end_token, seq LIMIT ?"
)
_AFTER = (
    "SELECT seq, start_line, start_token, end_token, text FROM context_chunks"
    " WHERE object_id = ? AND seq > ? ORDER BY seq LIMIT ?"
)


@dataclass(frozen=True)
class Piece:
    line: int
    starts_line: bool
    start_token: int  # 0-based, half-open
    end_token: int
    text: str


def iter_pieces(
    db: sqlite_utils.Database, object_id: int, unit: str, first: int, count: Callable[[str], int]
) -> Iterator[Piece]:
    """Pieces in order from the chunk holding line `first` (or 0-based token `first`)."""
    sql = _BY_LINE if unit == "lines" else _BY_TOKEN
    starts_line: bool | None = None
    for seq, line, start_token, end_token, text in _chunks_from(db, sql, object_id, first):
        if starts_line is None:
            starts_line = seq == 0 or _previous_ends_line(db, object_id, seq)
        lines = split_lines(text)
        token = start_token
        for index, part in enumerate(lines):
            last = index == len(lines) - 1
            end = end_token if last else min(end_token, token + count(part))
            yield Piece(line, starts_line, token, end, part)
            token = end
            starts_line = part.endswith("\n")
            line += starts_line


def _chunks_from(db: Any, sql: str, object_id: int, first: int) -> Iterator[tuple[int, int, int, int, str]]:
    """The chunks from the one `sql` finds for `first` on, in order, a page at a time: a read stops after a few,
    and PostgreSQL's driver would fetch every row a query gives before the first is read."""
    params = [object_id, first, PAGE_CHUNKS]
    while True:
        count = 0
        for row in db.execute(sql, params):  # SQLite's cursor steps as the rows are taken
            count += 1
            yield row
        if count < PAGE_CHUNKS:
            return
        sql, params = _AFTER, [object_id, row[0], PAGE_CHUNKS]


def _previous_ends_line(db: sqlite_utils.Database, object_id: int, seq: int) -> bool:
    row = db.execute("SELECT text FROM context_chunks WHERE object_id = ? AND seq = ?", [object_id, seq - 1]).fetchone()
    return row is None or row[0].endswith("\n")


def iter_lines(db: sqlite_utils.Database, object_id: int) -> Iterator[tuple[int, str]]:
    """`(line number, text)` for every line; a line cut into pieces yields its first piece only."""
    starts_line = True
    for line, text in db.execute(
        "SELECT start_line, text FROM context_chunks WHERE object_id = ? ORDER BY seq", [object_id]
    ):
        for part in split_lines(text):
            if starts_line:
                yield line, part
            starts_line = part.endswith("\n")
            line += starts_line


def read_span(
    db: sqlite_utils.Database,
    ref: str,
    object_id: int,
    unit: str,
    start: int,
    end: int,
    budget: int,
    count: Callable[[str], int],
) -> Span:
    """Read `start..end` (1-based, inclusive, in `unit`) of one object, at most `budget` tokens."""
    first = start if unit == "lines" else start - 1
    kept: list[Piece] = []
    used = 0
    stop: Piece | None = None
    for piece in iter_pieces(db, object_id, unit, first, count):
        if unit == "lines":
            before, after = piece.line < start, piece.line > end
        else:
            before, after = piece.end_token <= first, piece.start_token >= end
        if before:
            continue
        if unit == "tokens" and piece.start_token < first:
            piece = _drop_head(piece, first)
        if after:
            break
        size = piece.end_token - piece.start_token
        if used + size > budget:
            stop = piece
            break
        kept.append(piece)
        used += size
    if stop is not None and not kept:
        return _cut(ref, unit, stop, budget, count)
    return _span(ref, unit, kept, stop)


def _span(ref: str, unit: str, kept: list[Piece], stop: Piece | None) -> Span:
    first, last = kept[0], kept[-1]
    next_start, next_unit = None, unit
    if stop is not None:
        if unit == "lines" and stop.starts_line:
            next_start = stop.line
        else:
            next_start, next_unit = stop.start_token + 1, "tokens"
    lines = (first.line, last.line)
    tokens = (first.start_token + 1, last.end_token)
    start, end = lines if unit == "lines" else tokens
    return Span(
        ref,
        start,
        end,
        "".join(p.text for p in kept),
        stop is not None,
        unit,
        lines[0],
        lines[1],
        tokens[0],
        tokens[1],
        next_start,
        next_unit,
    )


def _ratio(piece: Piece) -> float:
    return len(piece.text) / max(1, piece.end_token - piece.start_token)


def _drop_head(piece: Piece, token: int) -> Piece:
    """The part of `piece` from 0-based `token` on, placed by characters in proportion.

    Only a piece long enough to matter is cut; a short line is kept whole."""
    if token - piece.start_token < MIN_CUT_TOKENS:
        return piece
    offset = math.ceil((token - piece.start_token) * _ratio(piece))
    return Piece(piece.line, False, token, piece.end_token, piece.text[offset:])


def _cut(ref: str, unit: str, piece: Piece, budget: int, count: Callable[[str], int]) -> Span:
    """The head of one piece that is alone larger than the budget.

    The head is at most `budget` tokens by the counter; the token where the
    rest starts is placed in proportion to characters, like `_drop_head`, so
    that reading on from `next_start` continues where this read stopped."""
    ratio = _ratio(piece)
    chars = max(1, int(budget * ratio))
    while chars > 1 and count(piece.text[:chars]) > budget:
        chars = chars * 3 // 4
    split = min(piece.end_token - 1, piece.start_token + max(1, math.floor(chars / ratio)))
    chars = min(len(piece.text), math.ceil((split - piece.start_token) * ratio))
    head = Piece(piece.line, piece.starts_line, piece.start_token, split, piece.text[:chars])
    rest = Piece(piece.line, False, split, piece.end_token, piece.text[chars:])
    return _span(ref, unit, [head], rest)
