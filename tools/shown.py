"""How the memory tools show nodes and edges, and the query check, apart from the tools themselves.

`tools.memory` builds the MCP-facing tool set (its signatures carry pydantic
constraints); `loci memory search` needs only these few functions, and
imports them from here without pydantic.
"""

from __future__ import annotations

from typing import Any

from memory.errors import UsageError
from memory.graph.records import Edge, Node, node_ref

__all__ = ["MAX_QUERY_CHARS", "check_query", "edge_dict", "node_dict"]

MAX_QUERY_CHARS = 2_000


def check_query(query: str) -> str:
    """The query itself, or a clear `UsageError` when it is too long to search with."""
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(f"the query has {len(query):,} characters, over the limit of {MAX_QUERY_CHARS:,}; shorten it")
    return query


def node_dict(node: Node, full: bool = False) -> dict[str, Any]:
    """A node as a tool shows it; `full` adds its counts and times."""
    shown: dict[str, Any] = {"id": node.ref, "kind": node.kind, "text": node.text}
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
