"""Navigation tools over the context store: list, outline, read, search, ask, map.

Plain typed async functions grouped on one object bound to a
`ContextStore`; `servers/context.py` turns them into MCP tools. Each
docstring is the description the model reads, so it says what the tool is
for and what its arguments mean, briefly. Every result is bounded: reads
stop at `max_read_tokens` and say where to go on, searches return at most
50 snippets, outlines at most 200 entries.

A tool that cannot honour its arguments raises `ToolError`: the store's
`UsageError`s (an unknown id, a range outside the object, a bad regular
expression) are translated here, in one place, so the model gets a message
it can act on. `context_ask` and `context_map` need a model; the runtime
provides it as an `asker` (see `tools.recursion`).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, Literal, ParamSpec, TypeVar

from loci.memory.context.objects import Span, Target
from loci.memory.context.store import KINDS, ContextStore
from loci.memory.errors import ToolError, UsageError
from loci.tools.recursion import Asker, ask, map_targets
from loci.tools.scope import Scope

LIST_LIMIT = 50
DEFAULT_LIST_KINDS = ("doc", "note")

__all__ = ["MAX_READ_TOKENS", "MAX_TARGETS", "Asker", "ContextTools", "Scope", "Target"]

MAX_READ_TOKENS = 2_000
MAX_SEARCH_HITS = 50
MAX_TARGETS = 64
OUTLINE_ENTRIES = 200

P = ParamSpec("P")
T = TypeVar("T")


def _tool_errors(fn: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Report the store's `UsageError`s as `ToolError`s, with the same message."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await fn(*args, **kwargs)
        except ToolError:
            raise
        except UsageError as exc:
            raise ToolError(str(exc)) from exc

    return wrapper


class ContextTools:
    """The `context` tool set, bound to one context store (and, for recursion, to an asker)."""

    def __init__(
        self,
        contexts: ContextStore,
        asker: Asker | None = None,
        *,
        concurrency: int = 4,
        max_read_tokens: int = MAX_READ_TOKENS,
        max_targets: int = MAX_TARGETS,
        scope: Scope | None = None,
    ) -> None:
        self.contexts = contexts
        self.scope = scope
        self.asker = asker
        self.concurrency = concurrency
        self.max_read_tokens = max_read_tokens
        self.max_targets = max_targets

    @_tool_errors
    async def context_list(self, kinds: list[str] | None = None, limit: int = LIST_LIMIT) -> dict[str, Any]:
        """List the context objects you can read: ids, names and sizes in lines and tokens.

        kinds: any of doc, obs, turn, note (default doc and note: loaded documents and your notes).
        Shows the newest `limit`; `total` says how many there are."""
        unknown = sorted(set(kinds or ()) - set(KINDS))
        if unknown:
            raise ToolError(f"unknown kind {', '.join(unknown)}; kinds are {', '.join(KINDS)}")
        objects = await self.contexts.list(kinds or DEFAULT_LIST_KINDS)
        if self.scope:
            objects = [o for o in objects if self.scope.allows(o.id)]
        shown = objects[-max(1, min(limit, LIST_LIMIT)) :]
        return {
            "total": len(objects),
            "objects": [{"id": o.id, "name": o.name, "lines": o.lines, "tokens": o.tokens} for o in shown],
        }

    @_tool_errors
    async def context_outline(self, id: str) -> dict[str, Any]:
        """Show the outline of a context object (headings, definitions or paragraphs) with each entry's line range."""
        if self.scope:
            self.scope.check(id)
        outline = await self.contexts.outline(id, limit=OUTLINE_ENTRIES)
        kept = [e for e in outline.entries if not self.scope or self.scope.covers(id, e.start, e.end)]
        entries = [{"title": e.title, "kind": e.kind, "level": e.level, "start": e.start, "end": e.end} for e in kept]
        return {"id": id, "format": outline.format, "truncated": outline.truncated, "entries": entries}

    @_tool_errors
    async def context_read(
        self, id: str, start: int = 1, end: int | None = None, unit: Literal["lines", "tokens"] = "lines"
    ) -> dict[str, Any]:
        """Read start..end (1-based, inclusive) of a context object such as doc:1, in lines or tokens.

        Long ranges are cut: `truncated` says so, `end` says where it stopped and `next` where to go on."""
        if self.scope:
            self.scope.check(id)
            if unit == "tokens" and id == self.scope.target.id and self.scope.target.start is not None:
                raise ToolError(f"read {self.scope.target} by lines: this helper's span is a line range")
            start, end = self.scope.lines(id, start, end)
        span = await self.contexts.read(id, start, end, max_tokens=self.max_read_tokens, unit=unit)
        return _span(span)

    @_tool_errors
    async def context_search(
        self, query: str, ids: list[str] | None = None, regex: bool = False, k: int = 5
    ) -> list[dict[str, Any]]:
        """Search the context objects (all, or only `ids`) for words, or a Python regular expression with regex=true.

        Returns up to k hits, each with its id, its best line (number and whole text) and the line range around it."""
        k = max(1, min(k, MAX_SEARCH_HITS))
        if self.scope:
            for ref in ids or []:
                self.scope.check(ref)
            ids = ids or [self.scope.target.id]
        hits = await self.contexts.search(query, ids=ids, k=k * 4 if self.scope else k, regex=regex)
        if self.scope:
            hits = [h for h in hits if self.scope.covers(h.id, h.start_line, h.end_line)][:k]
        return [
            {"id": h.id, "line": h.line, "start": h.start_line, "end": h.end_line}
            | ({"text": h.line_text} if h.line_text else {"snippet": h.snippet})
            for h in hits
        ]

    @_tool_errors
    async def context_ask(self, question: str, target: str) -> dict[str, Any]:
        """Ask a helper agent a question about one target only: an id (doc:3) or an id with lines (doc:3:120-180).

        Returns its answer and the evidence (ids and ranges) it rests on."""
        self._check_targets([target])
        return await ask(self.contexts, self.asker, question, target)

    @_tool_errors
    async def context_map(self, question: str, targets: list[str]) -> list[dict[str, Any]]:
        """Ask the same question of many targets (ids, or ids with lines such as doc:3:1-400), several at once.

        Each full answer is stored as a new context object; you get its id and a short answer per target."""
        self._check_targets(targets)
        return await map_targets(
            self.contexts, self.asker, question, targets, concurrency=self.concurrency, limit=self.max_targets
        )

    def _check_targets(self, targets: list[str]) -> None:
        if not self.scope:
            return
        for text in targets:
            if not self.scope.contains(Target.parse(text)):
                raise ToolError(f"{text} is outside this helper's span {self.scope.target}")


def _span(span: Span) -> dict[str, Any]:
    result: dict[str, Any] = {
        "id": span.id,
        "unit": span.unit,
        "start": span.start,
        "end": span.end,
        "lines": f"{span.start_line}-{span.end_line}",
        "tokens": f"{span.start_token}-{span.end_token}",
        "truncated": span.truncated,
    }
    if span.truncated and span.next_start is not None:
        result["next"] = {"start": span.next_start, "unit": span.next_unit}
    result["text"] = span.text
    return result
