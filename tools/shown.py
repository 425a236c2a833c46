"""How the memory tools show nodes and edges, and the query check, apart from the tools themselves.

`tools.memory` builds the MCP-facing tool set (its signatures carry pydantic
constraints); `loci memory search` needs only these few functions, and
imports them from here without pydantic.

A memory may hold up to ten million characters; a tool shows at most
`MAX_SHOWN_CHARS` of its text at once (a recall of five such memories would
otherwise answer with 100 MB of JSON). A node shown in part says so:
`text_chars` is the length of its whole text, and `next_offset`, present
while more follows, is where `memory_get` with that `offset` reads on.
"""

from __future__ import annotations

from typing import Any

from loci.memory.errors import UsageError
from loci.memory.graph.records import Edge, Node, node_ref

__all__ = ["MAX_QUERY_CHARS", "MAX_SHOWN_CHARS", "check_query", "edge_dict", "node_dict"]

MAX_QUERY_CHARS = 2_000
MAX_SHOWN_CHARS = 20_000


def check_query(query: str) -> str:
    """The query itself, or a clear `UsageError` when it is too long to search with."""
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(f"the query has {len(query):,} characters, over the limit of {MAX_QUERY_CHARS:,}; shorten it")
    return query


def node_dict(node: Node, full: bool = False, offset: int = 0) -> dict[str, Any]:
    """A node as a tool shows it, its text from `offset` and at most `MAX_SHOWN_CHARS` of it (see the module
    docstring); `full` adds its counts and times."""
    text = node.text
    shown: dict[str, Any] = {"id": node.ref, "kind": node.kind, "text": text[offset : offset + MAX_SHOWN_CHARS]}
    if offset or len(text) > MAX_SHOWN_CHARS:
        shown["text_chars"] = len(text)
        if offset + MAX_SHOWN_CHARS < len(text):
            shown["next_offset"] = offset + MAX_SHOWN_CHARS
    if node.name is not None:
        shown["name"] = node.name
    if full:
        shown.update(
            meta=node.meta,
            uses=node.uses,
            successes=node.successes,
            failures=node.failures,
            created=round(node.created, 3),
            updated=round(node.updated, 3),
            last_used=None if node.last_used is None else round(node.last_used, 3),
        )
        if node.status is not None:
            shown["status"] = node.status
    return shown


def edge_dict(edge: Edge) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "id": edge.id,
        "src": node_ref(edge.src),
        "dst": node_ref(edge.dst),
        "kind": edge.kind,
        "weight": round(edge.weight, 4),
        "uses": edge.uses,
    }
    if edge.label:
        shown["label"] = edge.label
    return shown
