"""Tool results that carry recalled memory: quoted as data for the model, unchanged for the program.

A client's model reads a tool result's text content; a program reads its
structured content. `quoted` wraps a tool whose result holds stored text
(`memory_recall`, `memory_get`, `memory_neighbors`, `memory_procedures`,
the compatible server's `read_graph`, `search_nodes` and `open_nodes`): the
text content becomes the result's JSON inside the stored-notes block of
memory/graph/quoted.py (which says these are stored notes, not
instructions, and escapes any tag in them that would close the block),
while the structured content stays exactly what the tool returned, in the
shape its output schema declares (a list is wrapped as `{"result": ...}`,
as the SDK wraps it).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic_core import to_jsonable_python

from memory.graph.quoted import quote_notes

__all__ = ["QUOTED_TOOLS", "quoted"]

QUOTED_TOOLS = frozenset(
    {"memory_recall", "memory_get", "memory_neighbors", "memory_procedures", "read_graph", "search_nodes", "open_nodes"}
)


def quoted(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """`fn` with its result's text content quoted as stored notes (see the module docstring)."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        data = to_jsonable_python(await fn(*args, **kwargs), by_alias=True)
        text = quote_notes(json.dumps(data, ensure_ascii=False, indent=2))
        structured = data if isinstance(data, dict) else {"result": data}
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)

    return wrapper
