"""The memory verbs: remember, update, forget, restore, recall, get, neighbors, link, stats.

Plain typed async functions grouped on one object bound to a `Graph` and its
`Recall`; servers/memory.py serves them over MCP and the agent's MCP host
calls them. Each docstring is the description the model reads. Ids are shown
as `mem:N`; every tool also accepts the bare number. A tool that cannot
honour its arguments raises a `UsageError` (empty text, unknown id, text over
the limit) whose message says what to do instead.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from loci.memory.errors import UsageError
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall
from loci.memory.graph.records import EdgeKind, NodeKind, node_ref, parse_node_id
from loci.memory.json_input import TooDeep, check_depth
from loci.tools.shown import MAX_QUERY_CHARS, check_query, edge_dict, node_dict

__all__ = ["MAX_QUERY_CHARS", "MemoryTools", "check_query", "edge_dict", "node_dict"]


class MemoryTools:
    """The `memory` tool set, bound to one graph and its recall."""

    def __init__(self, graph: Graph, recall: Recall | None = None) -> None:
        self.graph = graph
        self.recall = recall or Recall(graph)

    async def memory_remember(
        self,
        text: str,
        kind: NodeKind = "semantic",
        links: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Remember a fact (semantic), an episode (episodic) or a procedure (procedural).

        links: ids of memories this one relates to (for example the facts an episode used).
        Remembering the same text again returns the existing id and counts a use."""
        if metadata is not None:
            try:
                check_depth(metadata)
            except TooDeep as exc:
                raise UsageError(f"metadata: {exc}") from None
        targets = [parse_node_id(ref) for ref in links or []]
        node, created = await self.graph.remember(text, kind, metadata, targets, cause="tool:memory_remember")
        return {"id": node.ref, "created": created, "uses": node.uses, "linked": [node_ref(t) for t in targets]}

    async def memory_update(self, id: str, text: str, reason: str = "") -> dict[str, Any]:
        """Replace the text of a memory such as mem:12, keeping its links and history; say why in reason."""
        node = await self.graph.update(parse_node_id(id), text, cause="tool:memory_update", reason=reason or None)
        return node_dict(node)

    async def memory_forget(self, id: str, reason: str = "", confirm: bool = False) -> dict[str, Any]:
        """Forget a memory such as mem:12 and its links; say why in reason. It stays in the history, and
        memory_restore brings it back. Over MCP the user is asked first when the client can ask; confirm: true
        says they agreed already."""
        node = await self.graph.forget(parse_node_id(id), cause="tool:memory_forget", reason=reason or None)
        return {"id": node.ref, "forgotten": True}

    async def memory_restore(self, id: str, reason: str = "", confirm: bool = False) -> dict[str, Any]:
        """Bring back a forgotten memory such as mem:12, with the links it had; say why in reason. Over MCP the
        user is asked first when the client can ask; confirm: true says they agreed already."""
        node = await self.graph.restore(parse_node_id(id), cause="tool:memory_restore", reason=reason or None)
        return {**node_dict(node), "restored": True}

    async def memory_recall(self, query: str, k: int = 5, kinds: list[NodeKind] | None = None) -> list[dict[str, Any]]:
        """Recall the k memories most relevant to a query, best first.

        Each result has a score and its parts (lexical, vector, graph, recency, frequency), so you can see why."""
        check_query(query)
        found = await self.recall.recall(query, k=k, kinds=kinds)
        return [{**node_dict(r.node), "score": r.score, "parts": r.parts} for r in found]

    async def memory_get(self, id: str, offset: Annotated[int, Field(ge=0)] = 0) -> dict[str, Any]:
        """Read one memory such as mem:12: text, metadata, use counts and its links.

        A long text comes in parts: text_chars is its whole length, and next_offset, while more follows, is the
        offset to read on from."""
        node_id = parse_node_id(id)
        node = await self.graph.get(node_id)
        edges = await self.graph.edges(node_id)
        shown = node_dict(node, full=True, offset=offset)
        return {**shown, "edges": [edge_dict(e) for e in edges[:50]], "edge_count": len(edges)}

    async def memory_neighbors(
        self, id: str, depth: int = 1, kinds: list[NodeKind] | None = None
    ) -> list[dict[str, Any]]:
        """Browse the graph: the memories linked to mem:N within depth hops (1 to 3), nearest and strongest first."""
        found = await self.graph.neighbors(parse_node_id(id), depth=depth, kinds=kinds)
        return [{**node_dict(n.node), "hops": n.hops, "edge": edge_dict(n.edge)} for n in found]

    async def memory_link(
        self,
        a: str,
        b: str,
        kind: EdgeKind = "related",
        # No `| None`: an explicit null (what JSON clients send for NaN) is refused, not taken as "no weight".
        weight: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = None,
    ) -> dict[str, Any]:
        """Link memory a to memory b. kind: ground (fact used in an episode), distill (episode a procedure
        came from) or related. weight: 0 to 1, default 0.5; linking again sets the weight."""
        edge, created = await self.graph.link(
            parse_node_id(a), parse_node_id(b), kind, weight, cause="tool:memory_link"
        )
        return {**edge_dict(edge), "created": created}

    async def memory_stats(self) -> dict[str, Any]:
        """Counts of this project's memories and links by kind, its forgotten memories and events, and the
        characters its memories hold."""
        return await self.graph.stats()

    def all(self) -> list[Any]:
        return [
            self.memory_remember,
            self.memory_update,
            self.memory_forget,
            self.memory_restore,
            self.memory_recall,
            self.memory_get,
            self.memory_neighbors,
            self.memory_link,
            self.memory_stats,
        ]
