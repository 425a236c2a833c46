"""Navigation tools over the context store: list, read a range, search.

Plain typed async functions grouped on one object bound to a
`ContextStore`; `servers/context.py` turns them into MCP tools. Each
docstring is the description the model reads, so it says what the tool is
for and what its arguments mean, briefly. A tool that cannot honour its
arguments raises `ToolError` (or a `UsageError`), which MCP turns into a
result the model can read and act on.
"""

from __future__ import annotations

from typing import Any

from memory.context import ContextStore

__all__ = ["ContextTools"]

MAX_READ_TOKENS = 2_000


class ContextTools:
    """The `context` tool set, bound to one context store."""

    def __init__(self, contexts: ContextStore) -> None:
        self.contexts = contexts

    async def context_list(self) -> list[dict[str, Any]]:
        """List the context objects you can read: their ids, names and sizes in lines and tokens."""
        objects = await self.contexts.list()
        return [{"id": o.id, "name": o.name, "lines": o.lines, "tokens": o.tokens} for o in objects]

    async def context_read(self, id: str, start: int = 1, end: int | None = None) -> dict[str, Any]:
        """Read lines start..end (1-based, inclusive) of a context object such as doc:1.

        Long ranges are cut; `truncated` says so and `end` says where it stopped."""
        span = await self.contexts.read(id, start, end, max_tokens=MAX_READ_TOKENS)
        return {"id": span.id, "start": span.start, "end": span.end, "truncated": span.truncated, "text": span.text}

    async def context_search(self, query: str, ids: list[str] | None = None, k: int = 5) -> list[dict[str, Any]]:
        """Search the context objects for words; returns the best k snippets with their ids and line ranges."""
        hits = await self.contexts.search(query, ids=ids, k=max(1, min(k, 50)))
        return [{"id": h.id, "start": h.start_line, "end": h.end_line, "snippet": h.snippet} for h in hits]
