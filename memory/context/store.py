"""Context objects: everything the agent may browse, stored once, read in ranges.

A context object is a document the user loaded, a tool result, a turn of the
agent's own history or a note that summarises pruned turns. Each has a
stable id, `kind:N` (`doc:3`, `obs:42`, `turn:17`, `note:5`), where N is the
row id, so ids never collide across kinds. The text is split into chunks of
whole lines; each chunk records its line, character and token offsets and is
indexed by FTS5, so the agent reads a range or searches without the whole
object ever entering the prompt.

Loading streams (`memory.context.loader`): a source is read, decoded, chunked and
counted a megabyte at a time in a worker thread, and each batch is inserted
in its own short transaction, so a huge file neither fills memory nor holds
the writer lock for long. Until its last batch is in, an object is
`complete = 0` and invisible; a load that fails is removed.

Token offsets are counted with the tokenizer passed in (the model's own),
or estimated at four characters a token when there is none. The counter is
called from worker threads. Which files may be read is decided by
`memory.context.paths.Roots`. With a `conversations` reader (the session gives
`memory.imports.transcript.conversation_document`), a file that is a conversation (dated speaker turns as
text, JSONL messages or LoCoMo JSON) is stored one turn a line, each with its day,
speaker and resolved relative dates, and `meta` says `format: conversation`.
Reads (`memory.context.spans`), outlines (`memory.context.outline`) and searches
(`memory.context.fulltext`, `memory.context.regex_scan`) live in their own files.

A store is built for one project (`memory.projects`): what it loads belongs
to that project, and it lists, reads and searches only that project's
objects, so another project's id is "no context object", as one that never
was. Reloading an unchanged file reuses the project's own object; a file
loaded in two projects is two objects. `project=ALL` reads every project's
objects and loads none.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import anyio.to_thread

from loci.memory.context.fulltext import chunk_index, fts_literal, fts_search
from loci.memory.context.loader import SNIFF_BYTES, Chunk, ChunkStream, binary_reason, detect_format
from loci.memory.context.objects import KINDS, UNITS, ContextObject, Hit, Span, Target, parse_id
from loci.memory.context.outline import Outline, build_outline
from loci.memory.context.paths import Roots, walk
from loci.memory.context.regex_scan import DEFAULT_TIMEOUT, regex_search
from loci.memory.context.schema import MIGRATIONS
from loci.memory.context.spans import iter_lines, read_span
from loci.memory.engines.base import Engine
from loci.memory.engines.dialects import dialect_of
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.projects import ALL, DEFAULT_PROJECT, check_project, in_project, writable_project
from loci.memory.regular import open_regular

__all__ = [
    "KINDS",
    "MIGRATIONS",
    "ContextObject",
    "ContextStore",
    "Hit",
    "Loaded",
    "OnFile",
    "Span",
    "Target",
    "fts_literal",
    "parse_id",
]

OnFile = Callable[[int, int, str], Awaitable[None]]

MAX_CONVERSATION_BYTES = 64 << 20


@dataclass
class Loaded:
    """What a directory (or path) load produced: the objects, and what it skipped and why."""

    objects: list[ContextObject] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


class ContextStore:
    """The context objects of one project in a home on either engine (`project=ALL`: of every project, for reading),
    with an optional token counter and an allow-list of roots."""

    def __init__(
        self,
        store: Engine,
        count_tokens: Callable[[str], int] | None = None,
        *,
        roots: Iterable[str | Path] | None = None,
        regex_timeout: float = DEFAULT_TIMEOUT,
        conversations: Callable[[str], tuple[str, dict[str, Any]] | None] | None = None,
        project: str | None = DEFAULT_PROJECT,
    ) -> None:
        self.store = store
        self.project = project if project is ALL else check_project(project)
        # reads a file's text as a conversation, one turn a line, and its meta; None when it is not one
        self.conversations = conversations
        self.count_tokens = count_tokens or (lambda text: (len(text) + 3) // 4)
        self.roots = Roots(roots)
        self.regex_timeout = regex_timeout

    # -- loading ---------------------------------------------------------

    async def add_text(self, kind: str, name: str, text: str, meta: dict[str, Any] | None = None) -> ContextObject:
        """Store `text` (already in memory: a tool result, a turn, a note) as an object of `kind`."""
        _check_kind(kind)
        meta = {"format": "text", **(meta or {})}
        return await self._load(kind, name, None, ChunkStream.from_text(text, self.count_tokens), meta, {})

    def add_text_now(self, conn: Any, kind: str, name: str, text: str, meta: dict[str, Any] | None = None) -> str:
        """`add_text` inside the caller's transaction (a job's effect), for a short text; the new object's id."""
        _check_kind(kind)
        meta = {"format": "text", **(meta or {})}
        stream = ChunkStream.from_text(text, self.count_tokens)
        object_id = _insert_object(conn, writable_project(self.project), kind, name, None, meta)
        while batch := stream.next_batch():
            _insert_chunks(conn, object_id, batch)
        _complete_object(conn, object_id, stream, meta)
        return f"{kind}:{object_id}"

    async def add_file(self, path: str | Path, *, kind: str = "doc", name: str | None = None) -> ContextObject:
        """Load a text file as a `doc`, streaming. Undecodable bytes are replaced and counted in `meta`."""
        writable_project(self.project)
        real = self.roots.resolve(path)
        if real.is_dir():
            raise UsageError(f"{path} is a directory; pass a file (or load the directory with add_directory)")
        return await self._load_file(real, name or Path(path).name, kind)

    async def add_directory(self, path: str | Path, on_file: OnFile | None = None) -> Loaded:
        """Load every text file under a directory, recursively; skip binaries, `.git` and escaping symlinks.

        `on_file(done, total, name)` is awaited before each file (progress for a client)."""
        writable_project(self.project)
        real = self.roots.resolve(path)
        if not real.is_dir():
            raise UsageError(f"{path} is not a directory")
        entries = await anyio.to_thread.run_sync(lambda: list(walk(real)))
        loaded = Loaded()
        for done, (file, target, reason) in enumerate(entries):
            relative = str(Path(real.name) / file.relative_to(real))
            if on_file is not None:
                await on_file(done, len(entries), relative)
            if target is None:
                loaded.skipped.append((relative, reason or "skipped"))
                continue
            try:
                loaded.objects.append(await self._load_file(target, relative, "doc"))
            except UsageError as exc:
                loaded.skipped.append((relative, str(exc)))
        return loaded

    async def add_path(self, path: str | Path, on_file: OnFile | None = None) -> Loaded:
        """`add_file` or `add_directory`, by what `path` is."""
        if self.roots.resolve(path).is_dir():
            return await self.add_directory(path, on_file)
        return Loaded([await self.add_file(path)])

    async def forget(self, ref: str, kinds: Iterable[str] = ("doc",)) -> ContextObject:
        """Remove an object of one of `kinds` (its chunks and its search index); the object as it was."""
        writable_project(self.project)
        obj = await self.get(ref)
        if obj.kind not in kinds:
            raise UsageError(f"{ref} is a {obj.kind}; only {', '.join(kinds)} objects can be forgotten")
        await self.store.write(lambda db: _delete_object(db, int(obj.id.split(":")[1])))
        return obj

    async def add_stream(
        self, name: str, source: BinaryIO, *, kind: str = "doc", meta: dict[str, Any] | None = None
    ) -> ContextObject:
        """Load a binary stream (stdin: `sys.stdin.buffer`) as UTF-8 text, streaming."""
        _check_kind(kind)
        first = await anyio.to_thread.run_sync(source.read, SNIFF_BYTES)
        if reason := binary_reason(first):
            raise UsageError(f"{name} looks binary ({reason}); Loci loads text")
        stats: dict[str, int] = {}
        stream = ChunkStream.from_binary(source, first, self.count_tokens, stats)
        return await self._load(kind, name, None, stream, {"format": detect_format(name), **(meta or {})}, stats)

    async def _load_file(self, real: Path, name: str, kind: str) -> ContextObject:
        writable_project(self.project)
        try:
            stat = real.stat()
        except OSError as exc:
            raise UsageError(f"cannot read {real}: {exc.strerror}") from exc
        fingerprint = f"{stat.st_size}:{stat.st_mtime_ns}"
        if (same := await self._unchanged(kind, str(real), fingerprint)) is not None:
            return same
        try:
            source = await anyio.to_thread.run_sync(open_regular, real)
        except OSError as exc:
            raise UsageError(f"cannot read {real}: {exc.strerror}") from exc
        try:
            first = await anyio.to_thread.run_sync(source.read, SNIFF_BYTES)
            if reason := binary_reason(first):
                raise UsageError(f"{real} looks binary ({reason}); Loci loads text")
            if self.conversations and (found := await _conversation(source, first, stat.st_size, self.conversations)):
                text, found_meta = found
                stream = ChunkStream.from_text(text, self.count_tokens)
                return await self._load(kind, name, str(real), stream, {**found_meta, "fingerprint": fingerprint}, {})
            stats: dict[str, int] = {}
            stream = ChunkStream.from_binary(source, first, self.count_tokens, stats)
            meta = {"format": detect_format(real.name), "fingerprint": fingerprint}
            return await self._load(kind, name, str(real), stream, meta, stats)
        except OSError as exc:
            raise UsageError(f"cannot read {real}: {exc.strerror or exc}") from exc
        finally:
            source.close()

    async def _unchanged(self, kind: str, source: str, fingerprint: str) -> ContextObject | None:
        """The object this project already loaded from `source`, if the file has not changed since
        (size and mtime)."""

        def fetch(db: Any) -> ContextObject | None:
            rows = list(
                db.query(
                    "SELECT * FROM context_objects WHERE source = ? AND kind = ? AND project = ? AND complete = 1"
                    f" AND {dialect_of(db).json_text('meta', 'fingerprint')} = ? ORDER BY id DESC LIMIT 1",
                    [source, kind, self.project, fingerprint],
                )
            )
            return _object(rows[0]) if rows else None

        return await self.store.read(fetch)

    async def _load(
        self, kind: str, name: str, source: str | None, stream: ChunkStream, meta: dict[str, Any], stats: dict[str, int]
    ) -> ContextObject:
        project = writable_project(self.project)
        object_id = await self.store.write(lambda db: _insert_object(db.conn, project, kind, name, source, meta))
        try:
            while batch := await anyio.to_thread.run_sync(stream.next_batch):
                await self.store.write(lambda db: _insert_chunks(db.conn, object_id, batch))
            if stats.get("replaced_bytes"):
                meta = {**meta, "replaced_bytes": stats["replaced_bytes"]}
            await self.store.write(lambda db: _complete_object(db.conn, object_id, stream, meta))
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.store.write(lambda db: _delete_object(db, object_id))
            raise
        return await self.get(f"{kind}:{object_id}")

    # -- reading ---------------------------------------------------------

    async def get(self, ref: str) -> ContextObject:
        kind, number = parse_id(ref)
        where, args = in_project(self.project)
        sql = f"SELECT * FROM context_objects WHERE id = ? AND kind = ? AND complete = 1{where}"

        def fetch(db: Any) -> ContextObject:
            rows = list(db.query(sql, [number, kind, *args]))
            if not rows:
                raise NotFoundError(f"no context object {ref}; context_list shows the ids there are")
            return _object(rows[0])

        return await self.store.read(fetch)

    async def last_id(self) -> int:
        """The highest object row id of the project so far (0 without one): objects made later have higher ids."""
        where, args = in_project(self.project)
        sql = f"SELECT COALESCE(MAX(id), 0) FROM context_objects WHERE TRUE{where}"
        return await self.store.read(lambda db: int(db.execute(sql, args).fetchone()[0]))

    async def list(self, kinds: Iterable[str] | None = None) -> list[ContextObject]:
        wanted = list(kinds or KINDS)
        where, args = in_project(self.project)

        def fetch(db: Any) -> list[ContextObject]:
            marks = ",".join("?" * len(wanted))
            sql = f"SELECT * FROM context_objects WHERE kind IN ({marks}) AND complete = 1{where} ORDER BY id"
            return [_object(row) for row in db.query(sql, [*wanted, *args])]

        return await self.store.read(fetch)

    async def read(
        self, ref: str, start: int = 1, end: int | None = None, max_tokens: int = 2_000, *, unit: str = "lines"
    ) -> Span:
        """`start..end` (1-based, inclusive, in lines or tokens) of `ref`, cut at `max_tokens`."""
        if unit not in UNITS:
            raise UsageError(f"unknown unit {unit!r}; read by 'lines' or 'tokens'")
        obj = await self.get(ref)
        size = obj.lines if unit == "lines" else obj.tokens
        if size == 0:
            raise UsageError(f"{ref} is empty")
        if start < 1 or start > size:
            raise UsageError(f"{ref} has {size} {unit}; start {start} is outside 1-{size}")
        end = size if end is None else min(end, size)
        if end < start:
            raise UsageError(f"the range {start}-{end} is empty; end must be at least start")
        number = parse_id(ref)[1]
        budget = max(1, max_tokens)
        return await self.store.read(
            lambda db: read_span(db, obj.id, number, unit, start, end, budget, self.count_tokens)
        )

    async def outline(self, ref: str, limit: int = 200) -> Outline:
        """The table of contents of `ref`: headings, definitions or paragraphs, each with its lines."""
        obj = await self.get(ref)
        fmt = str(obj.meta.get("format") or detect_format(obj.name))
        number = parse_id(ref)[1]
        return await self.store.read(lambda db: build_outline(fmt, iter_lines(db, number), obj.lines, limit))

    async def search(self, query: str, ids: list[str] | None = None, k: int = 10, *, regex: bool = False) -> list[Hit]:
        """Full-text search (words matched literally, BM25), or a time-bounded regular expression."""
        refs = [f"{kind}:{number}" for kind, number in (parse_id(ref) for ref in ids or [])]
        k = max(1, k)
        if regex:
            return await regex_search(self.store, query, refs, k, self.regex_timeout, project=self.project)
        if not fts_literal(query):
            raise UsageError("the search query has no words to look for")
        return await self.store.read(lambda db: fts_search(db, query, refs, k, project=self.project))

    async def check_target(self, target: Target) -> ContextObject:
        """The object `target` names, after checking that its line range lies inside it."""
        obj = await self.get(target.id)
        if target.start is not None:
            end = target.end if target.end is not None else obj.lines
            if not 1 <= target.start <= end <= obj.lines:
                raise UsageError(f"{target} is outside {obj.id}, which has lines 1-{obj.lines}")
        return obj


async def _conversation(
    source: BinaryIO, first: bytes, size: int, read: Callable[[str], tuple[str, dict[str, Any]] | None]
) -> tuple[str, dict[str, Any]] | None:
    """The conversation a file holds, as `read` gives it, read whole when small enough; else None.
    The file is rewound to just after its first block either way."""
    found = None
    if size <= MAX_CONVERSATION_BYTES and _looks_like_turns(first):
        rest = await anyio.to_thread.run_sync(source.read)
        found = read((first + rest).decode("utf-8", errors="replace"))
        source.seek(len(first))
    return found


def _looks_like_turns(first: bytes) -> bool:
    head = first.lstrip()[:1]
    return head in (b"[", b"{")


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise UsageError(f"unknown context kind {kind!r}; expected one of {', '.join(KINDS)}")


def _insert_object(conn: Any, project: str, kind: str, name: str, source: str | None, meta: dict[str, Any]) -> int:
    row = conn.execute(
        "INSERT INTO context_objects (project, kind, name, source, meta, created, complete)"
        " VALUES (?, ?, ?, ?, ?, ?, 0) RETURNING id",
        [project, kind, name, source, json.dumps(meta), time.time()],
    ).fetchone()
    return int(row[0])


def _complete_object(conn: Any, object_id: int, stream: ChunkStream, meta: dict[str, Any]) -> None:
    """Write an object's totals and mark it complete: readers see it from now on."""
    conn.execute(
        "UPDATE context_objects SET chars = ?, lines = ?, tokens = ?, meta = ?, complete = 1 WHERE id = ?",
        [stream.chars, stream.lines, stream.tokens, json.dumps(meta), object_id],
    )
    chunk_index(conn).loaded(conn, stream.seq)


def _insert_chunks(conn: Any, object_id: int, batch: list[Chunk]) -> None:
    chunk_index(conn).insert_chunks(conn, object_id, batch)


def _delete_object(db: Any, object_id: int) -> None:
    chunk_index(db).unindex_object(db.conn, object_id)
    db.conn.execute("DELETE FROM context_chunks WHERE object_id = ?", [object_id])
    db.conn.execute("DELETE FROM context_objects WHERE id = ?", [object_id])


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
        project=row["project"],
    )
