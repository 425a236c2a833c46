"""Regular-expression search with a hard time bound.

A pattern is compiled here first, so a pattern that does not compile gets a
clear error with its position and no process is started. The scan itself
runs in a child process (`memory/context/regex_worker.py`) that reads the SQLite
file on its own read-only connection and streams its hits back; at the
deadline the child is killed. A PostgreSQL home is read here instead, a page
of chunks at a time, and sent to the child over its stdin while its hits
come back (the child starts with the standard library alone, which has no
PostgreSQL driver); the child scans the same chunks in the same order. This bounds even a single pathological
`re.search` (`(a+)+$` against a long run of a's), which no check between
chunks and no thread could stop, and the CPU comes back with it.

Patterns are compiled with `re.MULTILINE`, as grep reads them: `^` and `$`
match at every line. They match within one chunk (about 40 lines); a match
that would span two chunks is not found. Hits come in document order, one
per line. The scan sees the objects of one project, or of every project
for `ALL` (None).

At most `MAX_SCANS` scans run at once in a process: each is a child process
that may spend its whole timeout on one core, so ten searches at once would
be ten of them. One more is refused at once with a `UsageError` that says so
(the tool's error), and the caller may search again when one has ended.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteSendStream

from loci.memory.context.objects import Hit
from loci.memory.engines.base import Engine
from loci.memory.errors import StoreError, UsageError
from loci.memory.projects import in_project

__all__ = ["DEFAULT_TIMEOUT", "MAX_PATTERN", "MAX_SCANS", "ScanSlots", "check_pattern", "regex_search"]

DEFAULT_TIMEOUT = 5.0
MAX_PATTERN = 1_000
WORKER = Path(__file__).with_name("regex_worker.py")
PAGE_ROWS = 256  # chunks read and sent to the scanning process at a time (a home it cannot read itself)
MAX_SCANS = 4


class ScanSlots:
    """The scans running in this process, at most `limit` at once (a count, so it holds across event loops)."""

    def __init__(self, limit: int = MAX_SCANS) -> None:
        self.limit = limit
        self.running = 0

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold a slot while the block runs; a `UsageError` when all `limit` are taken."""
        if self.running >= self.limit:
            raise UsageError(
                f"{self.running} regular-expression searches are already running, the most this server runs at once;"
                " search again when one has ended, or search with words instead"
            )
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1


SCANS = ScanSlots()


def check_pattern(pattern: str) -> re.Pattern[str]:
    """Compile `pattern` with Python's `re`, or raise a `UsageError` that says what is wrong."""
    if not pattern:
        raise UsageError("the regular expression is empty")
    if len(pattern) > MAX_PATTERN:
        raise UsageError(f"the regular expression is {len(pattern)} characters long; the limit is {MAX_PATTERN}")
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise UsageError(f"the regular expression {pattern!r} does not compile: {exc.msg}{where}") from exc
    except (OverflowError, RecursionError, MemoryError) as exc:
        raise UsageError(f"the regular expression {pattern!r} is too large to compile: {exc}") from exc


async def regex_search(
    store: Engine,
    pattern: str,
    refs: list[str] | None,
    k: int,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    project: str | None,
    slots: ScanSlots = SCANS,
) -> list[Hit]:
    """The first `k` lines matching `pattern` in the objects of `project` (None: of every project),
    in document order; `UsageError` past `timeout` seconds, or when `slots` are all taken."""
    check_pattern(pattern)
    with slots.slot():
        return await _scan(store, pattern, refs, k, timeout, project)


async def _scan(
    store: Engine, pattern: str, refs: list[str] | None, k: int, timeout: float, project: str | None
) -> list[Hit]:
    """The scan itself, in a child process (see the module docstring)."""
    wanted: dict[str, object] = {"pattern": pattern, "k": k}
    if (file := store.local_file) is not None:  # the child reads the file itself; else this process sends rows
        wanted |= {"db": str(file), "refs": refs or None, "project": project}
    hits: list[Hit] = []
    done: dict[str, object] = {}
    command = [sys.executable, "-I", "-S", str(WORKER)]
    async with await anyio.open_process(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        with anyio.move_on_after(timeout) as deadline:
            async with anyio.create_task_group() as group:
                group.start_soon(_send, process.stdin, wanted, None if file is not None else (store, refs, project))
                pending = b""
                async for data in process.stdout:
                    *lines, pending = (pending + data).split(b"\n")
                    for line in lines:
                        _take(json.loads(line), hits, done)
                error = b"".join([chunk async for chunk in process.stderr])
                code = await process.wait()
                group.cancel_scope.cancel()  # the scan ended: stop sending chunks it no longer reads
        if deadline.cancelled_caught:
            process.kill()
    if deadline.cancelled_caught:
        raise UsageError(
            f"the regular expression {pattern!r} did not finish within {timeout:g} s ({len(hits)} matches so far);"
            " it probably backtracks catastrophically (nested quantifiers such as (a+)+ or (a|aa)*)."
            " Simplify it, anchor it to literal text, or search with words instead"
        )
    if code != 0 or not done:
        message = error.decode("utf-8", "replace").strip().splitlines()
        raise StoreError(f"the regular-expression scan failed: {message[-1] if message else f'exit code {code}'}")
    return hits


async def _send(
    stdin: ByteSendStream, request: dict[str, object], chunks: tuple[Engine, list[str] | None, str | None] | None
) -> None:
    """The request to the scanning process, then, when it cannot read the home itself, the chunks to scan."""
    try:
        await stdin.send(json.dumps(request).encode() + b"\n")
        if chunks is not None:
            store, refs, project = chunks
            after = (0, -1)
            while rows := await store.read(lambda db, a=after: _page(db, a, refs, project)):
                await stdin.send(b"".join(json.dumps(row[:5]).encode() + b"\n" for row in rows))
                after = (rows[-1][5], rows[-1][6])
        await stdin.aclose()
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError):
        pass  # the scan found its k lines, or failed (said on stderr), and reads no more


def _page(db: Any, after: tuple[int, int], refs: list[str] | None, project: str | None) -> list[tuple[Any, ...]]:
    """The next `PAGE_ROWS` chunks to scan after chunk `after` (object, seq), in document order."""
    where, params = in_project(project, "o.project")
    if refs:
        where += f" AND o.kind || ':' || o.id IN ({','.join('?' * len(refs))})"
        params += refs
    sql = (
        "SELECT o.kind, o.id, c.start_line, c.end_line, c.text, c.object_id, c.seq FROM context_chunks c"
        " JOIN context_objects o ON o.id = c.object_id"
        f" WHERE o.complete = 1 AND (c.object_id > ? OR (c.object_id = ? AND c.seq > ?)){where}"
        " ORDER BY c.object_id, c.seq LIMIT ?"
    )
    return [tuple(row) for row in db.execute(sql, [after[0], after[0], after[1], *params, PAGE_ROWS]).fetchall()]


def _take(record: dict[str, object], hits: list[Hit], done: dict[str, object]) -> None:
    if record.get("done"):
        done.update(record)
        return
    hits.append(
        Hit(
            str(record["id"]),
            int(record["start_line"]),
            int(record["end_line"]),
            str(record["snippet"]),
            0.0,
            int(record["line"]),
        )
    )
