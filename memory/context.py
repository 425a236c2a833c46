"""Context objects: everything the agent may browse, stored once, read in ranges.

A context object is a document the user loaded, a tool result, a turn of the
agent's own history or a note that summarises pruned turns. Each has a
stable id, `kind:N` (`doc:3`, `obs:42`, `turn:17`, `note:5`), where N is the
row id, so ids never collide across kinds. The text is split into chunks of
whole lines; each chunk records its line, character and token offsets and is
indexed by FTS5, so the agent reads a range or searches without the whole
object ever entering the prompt.

Token offsets are counted with the tokenizer passed in (the model's own),
or estimated at four characters a token when there is none.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils
from sqlite_utils import Migrations

from memory.errors import NotFoundError, UsageError
from memory.store import Store, registered_migrations

__all__ = ["KINDS", "ContextObject", "ContextStore", "Hit", "Span", "parse_id"]

KINDS = ("doc", "obs", "turn", "note")
CHUNK_LINES = 40
CHUNK_CHARS = 4_000

MIGRATIONS = registered_migrations(Migrations("context"))


@MIGRATIONS()
def create_context_tables(db: sqlite_utils.Database) -> None:
    db.execute(
        "CREATE TABLE context_objects ("
        " id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, source TEXT,"
        " meta TEXT NOT NULL DEFAULT '{}', chars INTEGER NOT NULL DEFAULT 0,"
        " lines INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0,"
        " created REAL NOT NULL)"
    )
    db.execute(
        "CREATE TABLE context_chunks ("
        " id INTEGER PRIMARY KEY, object_id INTEGER NOT NULL REFERENCES context_objects(id),"
        " seq INTEGER NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,"
        " start_char INTEGER NOT NULL, end_char INTEGER NOT NULL,"
        " start_token INTEGER NOT NULL, end_token INTEGER NOT NULL, text TEXT NOT NULL,"
        " UNIQUE (object_id, seq))"
    )
    db.execute(
        "CREATE VIRTUAL TABLE context_fts USING fts5("
        " text, content='context_chunks', content_rowid='id', tokenize='unicode61')"
    )


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


@dataclass(frozen=True)
class Span:
    """A range of one object, in lines (1-based, inclusive)."""

    id: str
    start: int
    end: int
    text: str
    truncated: bool = False


@dataclass(frozen=True)
class Hit:
    id: str
    start_line: int
    end_line: int
    snippet: str
    score: float


def parse_id(ref: str) -> tuple[str, int]:
    """Split `doc:3` into `("doc", 3)`; a clear error for anything else."""
    kind, _, number = str(ref).partition(":")
    if kind not in KINDS or not number.isdigit():
        raise NotFoundError(f"{ref!r} is not a context id; ids look like doc:3, obs:42, turn:17 or note:5")
    return kind, int(number)


class ContextStore:
    """Context objects in a `Store`, with an optional token counter."""

    def __init__(self, store: Store, count_tokens: Callable[[str], int] | None = None) -> None:
        self.store = store
        self.count_tokens = count_tokens or (lambda text: (len(text) + 3) // 4)

    async def add_text(self, kind: str, name: str, text: str, meta: dict[str, Any] | None = None) -> ContextObject:
        if kind not in KINDS:
            raise UsageError(f"unknown context kind {kind!r}; expected one of {', '.join(KINDS)}")
        chunks = list(_chunk_lines(text.splitlines(keepends=True)))
        return await self._insert(kind, name, None, chunks, meta or {})

    async def add_file(self, path: str | Path) -> ContextObject:
        """Load a text file as a `doc`. Undecodable bytes are replaced and counted in `meta`."""
        path = Path(path)
        if not path.exists():
            raise NotFoundError(f"file not found: {path}")
        if path.is_dir():
            raise UsageError(f"{path} is a directory; pass a file")
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
        text = raw.decode("utf-8", errors="replace")
        meta: dict[str, Any] = {}
        replaced = text.count("\ufffd") - raw.decode("utf-8", errors="ignore").count("\ufffd")
        if replaced:
            meta["replaced_bytes"] = replaced
        chunks = list(_chunk_lines(text.splitlines(keepends=True)))
        return await self._insert("doc", path.name, str(path.resolve()), chunks, meta)

    async def get(self, ref: str) -> ContextObject:
        kind, number = parse_id(ref)

        def fetch(db: sqlite_utils.Database) -> ContextObject:
            rows = list(db.query("SELECT * FROM context_objects WHERE id = ? AND kind = ?", [number, kind]))
            if not rows:
                raise NotFoundError(f"no context object {ref}")
            return _object(rows[0])

        return await self.store.read(fetch)

    async def list(self, kinds: Iterable[str] | None = None) -> list[ContextObject]:
        wanted = list(kinds or KINDS)

        def fetch(db: sqlite_utils.Database) -> list[ContextObject]:
            marks = ",".join("?" * len(wanted))
            rows = db.query(f"SELECT * FROM context_objects WHERE kind IN ({marks}) ORDER BY id", wanted)
            return [_object(row) for row in rows]

        return await self.store.read(fetch)

    async def read(self, ref: str, start: int = 1, end: int | None = None, max_tokens: int = 2_000) -> Span:
        """Lines `start..end` (1-based, inclusive) of `ref`, cut at `max_tokens`."""
        obj = await self.get(ref)
        _, number = parse_id(ref)
        start = max(1, start)
        end = obj.lines if end is None else min(end, obj.lines)
        if end < start:
            raise UsageError(f"{ref} has {obj.lines} lines; the range {start}-{end} is empty")

        def fetch(db: sqlite_utils.Database) -> list[str]:
            rows = db.execute(
                "SELECT start_line, text FROM context_chunks WHERE object_id = ?"
                " AND end_line >= ? AND start_line <= ? ORDER BY seq",
                [number, start, end],
            ).fetchall()
            lines: list[str] = []
            for first, text in rows:
                for offset, line in enumerate(text.splitlines(keepends=True)):
                    if start <= first + offset <= end:
                        lines.append(line)
            return lines

        lines = await self.store.read(fetch)
        kept, used = [], 0
        for line in lines:
            used += self.count_tokens(line)
            if kept and used > max_tokens:
                break
            kept.append(line)
        truncated = len(kept) < len(lines)
        return Span(ref, start, start + len(kept) - 1, "".join(kept), truncated)

    async def search(self, query: str, ids: list[str] | None = None, k: int = 10) -> list[Hit]:
        """Full-text search; the query's words are matched literally, ranked by BM25."""
        match = fts_literal(query)
        if not match:
            raise UsageError("the search query has no words to look for")
        numbers = [parse_id(ref)[1] for ref in ids or []]

        def fetch(db: sqlite_utils.Database) -> list[Hit]:
            sql = (
                "SELECT o.kind, o.id, c.start_line, c.end_line,"
                " snippet(context_fts, 0, '[', ']', ' … ', 16), bm25(context_fts)"
                " FROM context_fts JOIN context_chunks c ON c.id = context_fts.rowid"
                " JOIN context_objects o ON o.id = c.object_id WHERE context_fts MATCH ?"
            )
            params: list[Any] = [match]
            if numbers:
                sql += f" AND o.id IN ({','.join('?' * len(numbers))})"
                params += numbers
            sql += " ORDER BY bm25(context_fts) LIMIT ?"
            params.append(k)
            return [
                Hit(f"{kind}:{oid}", first, last, snip, -score)
                for kind, oid, first, last, snip, score in db.execute(sql, params).fetchall()
            ]

        return await self.store.read(fetch)

    async def _insert(self, kind: str, name: str, source: str | None, chunks: list[tuple[int, str]], meta: dict[str, Any]) -> ContextObject:
        counted = [(first, text, self.count_tokens(text)) for first, text in chunks]

        def insert(db: sqlite_utils.Database) -> int:
            cursor = db.execute(
                "INSERT INTO context_objects (kind, name, source, meta, created) VALUES (?, ?, ?, ?, ?)",
                [kind, name, source, json.dumps(meta), time.time()],
            )
            object_id = cursor.lastrowid
            chars = tokens = lines = 0
            for seq, (first, text, n_tokens) in enumerate(counted):
                n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
                cursor = db.execute(
                    "INSERT INTO context_chunks (object_id, seq, start_line, end_line, start_char,"
                    " end_char, start_token, end_token, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [object_id, seq, first, first + n_lines - 1, chars, chars + len(text), tokens, tokens + n_tokens, text],
                )
                db.execute("INSERT INTO context_fts (rowid, text) VALUES (?, ?)", [cursor.lastrowid, text])
                chars, tokens, lines = chars + len(text), tokens + n_tokens, first + n_lines - 1
            db.execute(
                "UPDATE context_objects SET chars = ?, lines = ?, tokens = ? WHERE id = ?",
                [chars, lines, tokens, object_id],
            )
            return object_id

        object_id = await self.store.write(insert)
        return await self.get(f"{kind}:{object_id}")


def fts_literal(query: str) -> str:
    """Quote every word so FTS5 syntax in a query (`NEAR(`, `*`, quotes) is searched literally."""
    words = [w for w in "".join(c if c.isalnum() or c in "_-" else " " for c in query).split() if w.strip("-_")]
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def _chunk_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """Group lines into chunks of at most CHUNK_LINES lines or about CHUNK_CHARS characters."""
    buffer: list[str] = []
    first, size = 1, 0
    for number, line in enumerate(lines, start=1):
        if buffer and (len(buffer) >= CHUNK_LINES or size + len(line) > CHUNK_CHARS):
            yield first, "".join(buffer)
            buffer, first, size = [], number, 0
        buffer.append(line)
        size += len(line)
    if buffer:
        yield first, "".join(buffer)


def _object(row: dict[str, Any]) -> ContextObject:
    return ContextObject(
        id=f"{row['kind']}:{row['id']}",
        kind=row["kind"],
        name=row["name"],
        source=row["source"],
        chars=row["chars"],
        lines=row["lines"],
        tokens=row["tokens"],
        meta=json.loads(row["meta"] or "{}"),
    )
