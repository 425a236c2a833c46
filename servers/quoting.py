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

The JSON is written by pydantic-core's serializer with the same two-space
indent as `json.dumps(..., indent=2)`, which with an indent runs Python's
pure-Python encoder and cost ten times as much per result; the text is the
same but for how a float past the decimal's reach is spelled (`0.00001`,
not `1e-05`). Text it cannot write (a lone surrogate) falls back to
`json.dumps`, so it fails as it did before.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

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
        text = quote_notes(_indented(data))
        structured = data if isinstance(data, dict) else {"result": data}
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)

    return wrapper


def _indented(data: Any) -> str:
    """`data` as JSON indented by two spaces, as `json.dumps(data, ensure_ascii=False, indent=2)` writes it."""
    try:
        return to_json(data, indent=2).decode("utf-8")
    except PydanticSerializationError:
        return json.dumps(data, ensure_ascii=False, indent=2)
