"""The memory graph: facts, episodes and procedures, linked by weighted edges.

`Graph` is the async face of the graph over one `Store`. Reads run on a
reader connection, writes in one transaction on the writer (see
memory/graph/ops.py for the writes and memory/graph/schema.py for the tables
and the identity rules). A batch (`add_many`, `link_many`) is one
transaction, which is what makes bulk loading fast and a crash harmless.

When an embedder is given, the vectors of new or changed nodes are computed
after the write and stored in a second, small transaction: a failing embedder
leaves the node remembered and findable by its words, just not by meaning.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from memory.graph.embed import Embedder, pack_vector
from memory.graph.ops import (
    NewNode,
    fetch_nodes,
    forget_node,
    insert_edges,
    insert_nodes,
    live_node,
    record_use,
    update_node,
    upsert_edge,
)
from memory.graph.revisions import restore_node
from memory.graph.schema import (
    EDGE_COLUMNS,
    EDGE_KINDS,
    NODE_KINDS,
    Edge,
    Node,
    check_kinds,
    edge_from_row,
)
from memory.params import in_chunks
from memory.store import Store

__all__ = ["Graph", "Neighbor", "NewNode", "adjacent_edges", "infer_edge_kind"]

MAX_DEPTH = 3
MAX_NEIGHBORS = 200


@dataclass(frozen=True)
class Neighbor:
    """A node reached from another: how many hops away and over which edge."""

    node: Node
    hops: int
    edge: Edge


def infer_edge_kind(src_kind: str, dst_kind: str) -> str:
    """`ground` between an episode and a fact, `distill` between a procedure and an episode, else `related`."""
    pair = {src_kind, dst_kind}
    if pair == {"episodic", "semantic"}:
        return "ground"
    if pair == {"procedural", "episodic"}:
        return "distill"
    return "related"


def adjacent_edges(conn: sqlite3.Connection, ids: Sequence[int]) -> list[Edge]:
    """The live edges touching any of `ids`, in either direction (two indexed lookups)."""
    found: list[Edge] = []
    for chunk, marks in in_chunks(ids):
        sql = (
            f"SELECT {EDGE_COLUMNS} FROM memory_edges WHERE deleted IS NULL AND src IN ({marks})"
            f" UNION ALL SELECT {EDGE_COLUMNS} FROM memory_edges WHERE deleted IS NULL AND dst IN ({marks})"
        )
        found.extend(edge_from_row(row) for row in conn.execute(sql, chunk + chunk))
    return found


class Graph:
    """The memory graph in one `Store`; ids are integers (shown to people as `mem:N`)."""

    def __init__(self, store: Store, embedder: Embedder | None = None) -> None:
        self.store = store
        self.embedder = embedder

    async def remember(
        self,
        text: str,
        kind: str = "semantic",
        meta: dict[str, Any] | None = None,
        links: Iterable[int] = (),
        cause: str | None = None,
    ) -> tuple[Node, bool]:
        """Add a node (or find its twin and count a use) and link it to `links`; `(node, created)`."""
        item = NewNode(text, kind, meta).checked()
        targets = list(links)

        def write(db: sqlite_utils.Database) -> tuple[Node, bool]:
            conn = db.conn
            [(node_id, created)] = insert_nodes(conn, [item], cause)
            for other in targets:
                other_kind = live_node(conn, other).kind
                upsert_edge(conn, node_id, other, infer_edge_kind(kind, other_kind), cause=cause)
            return live_node(conn, node_id), created

        node, created = await self.store.write(write)
        if created:
            await self._embed([(node.id, node.text)])
        return node, created

    async def add_many(self, items: Sequence[NewNode], cause: str | None = None) -> list[tuple[int, bool]]:
        """Remember many nodes in one transaction; `(id, created)` for each, in order."""
        checked = [item.checked() for item in items]
        results = await self.store.write(lambda db: insert_nodes(db.conn, checked, cause))
        fresh = [(node_id, item.text) for (node_id, created), item in zip(results, checked, strict=True) if created]
        await self._embed(fresh)
        return results

    async def link(
        self,
        src: int,
        dst: int,
        kind: str = "related",
        weight: float | None = None,
        label: str = "",
        cause: str | None = None,
    ) -> tuple[Edge, bool]:
        """Link two live nodes; `(edge, created)`. Linking again only changes the weight, if given."""
        return await self.store.write(
            lambda db: upsert_edge(db.conn, src, dst, kind, label=label, weight=weight, cause=cause)
        )

    async def link_many(self, links: Sequence[tuple[int, int, str, float]], cause: str | None = None) -> int:
        """Add many `(src, dst, kind, weight)` edges in one transaction; returns how many were new."""
        batch = list(links)
        return await self.store.write(lambda db: insert_edges(db.conn, batch, cause))

    async def update(self, node_id: int, text: str, cause: str | None = None, reason: str | None = None) -> Node:
        node = await self.store.write(lambda db: update_node(db.conn, node_id, text, cause, reason))
        await self._embed([(node.id, node.text)])
        return node

    async def forget(self, node_id: int, cause: str | None = None, reason: str | None = None) -> Node:
        return await self.store.write(lambda db: forget_node(db.conn, node_id, cause, reason))

    async def restore(self, node_id: int, cause: str | None = None, reason: str | None = None) -> Node:
        """Bring a forgotten node back with the edges its forget retired (memory/graph/revisions.py)."""
        return await self.store.write(lambda db: restore_node(db.conn, node_id, cause, reason))

    async def get(self, node_id: int) -> Node:
        return await self.store.read(lambda db: live_node(db.conn, node_id))

    async def edges(self, node_id: int) -> list[Edge]:
        """The live edges touching a node, strongest first."""
        await self.get(node_id)
        edges = await self.store.read(lambda db: adjacent_edges(db.conn, [node_id]))
        return sorted(edges, key=lambda e: (-e.weight, e.id))

    async def neighbors(
        self, node_id: int, depth: int = 1, kinds: Iterable[str] | None = None, limit: int = 50
    ) -> list[Neighbor]:
        """Nodes within `depth` hops (either direction), nearest and strongest first."""
        wanted = set(check_kinds(kinds)) if kinds else set(NODE_KINDS)
        depth = max(1, min(depth, MAX_DEPTH))
        limit = max(1, min(limit, MAX_NEIGHBORS))

        def read(db: sqlite_utils.Database) -> list[Neighbor]:
            live_node(db.conn, node_id)
            reached: dict[int, tuple[int, Edge | None]] = {node_id: (0, None)}
            frontier = [node_id]
            for hop in range(1, depth + 1):
                edges = sorted(adjacent_edges(db.conn, frontier), key=lambda e: -e.weight)
                frontier_set, frontier = set(frontier), []
                for edge in edges:
                    other = edge.dst if edge.src in frontier_set else edge.src
                    if other not in reached and len(reached) <= MAX_NEIGHBORS * 4:
                        reached[other] = (hop, edge)
                        frontier.append(other)
            reached.pop(node_id)
            nodes = fetch_nodes(db.conn, reached)
            found = [Neighbor(n, *reached[n.id]) for n in nodes.values() if n.kind in wanted]
            return sorted(found, key=lambda x: (x.hops, -x.edge.weight, x.node.id))[:limit]

        return await self.store.read(read)

    async def record_use(self, node_ids: Sequence[int], edge_ids: Sequence[int] = ()) -> None:
        if node_ids or edge_ids:
            await self.store.write(lambda db: record_use(db.conn, node_ids, edge_ids))

    async def history(self, node_id: int, limit: int = 20) -> list[dict[str, Any]]:
        """The latest events of one node, newest first."""
        sql = "SELECT at, op, before, after, cause FROM memory_events WHERE node = ? ORDER BY id DESC LIMIT ?"
        rows = await self.store.read(lambda db: list(db.query(sql, [node_id, limit])))
        return rows

    async def stats(self) -> dict[str, Any]:
        """Counts of live nodes and edges by kind, forgotten ones, events, and the file's size."""

        def read(db: sqlite_utils.Database) -> dict[str, Any]:
            conn = db.conn
            nodes = dict.fromkeys(NODE_KINDS, 0)
            nodes.update(
                conn.execute("SELECT kind, count(*) FROM memory_nodes WHERE deleted IS NULL GROUP BY kind").fetchall()
            )
            edges = dict.fromkeys(EDGE_KINDS, 0)
            edges.update(
                conn.execute("SELECT kind, count(*) FROM memory_edges WHERE deleted IS NULL GROUP BY kind").fetchall()
            )

            def one(sql: str) -> int:
                return conn.execute(sql).fetchone()[0]

            return {
                "nodes": sum(nodes.values()),
                "nodes_by_kind": nodes,
                "edges": sum(edges.values()),
                "edges_by_kind": edges,
                "forgotten_nodes": one("SELECT count(*) FROM memory_nodes WHERE deleted IS NOT NULL"),
                "vectors": one("SELECT count(*) FROM memory_vectors"),
                "events": one("SELECT count(*) FROM memory_events"),
                "db_bytes": one("PRAGMA page_count") * one("PRAGMA page_size"),
            }

        return await self.store.read(read)

    async def embed(self, texts: list[tuple[int, str]]) -> None:
        """Store the vectors of nodes written in a caller's own transaction (no-op without an embedder)."""
        await self._embed(texts)

    async def _embed(self, texts: list[tuple[int, str]]) -> None:
        if self.embedder is None or not texts:
            return
        vectors = await self.embedder([text for _, text in texts])
        rows = [(node_id, len(v), pack_vector(v)) for (node_id, _), v in zip(texts, vectors, strict=True)]
        await self.store.write(
            lambda db: db.conn.executemany(
                "INSERT OR REPLACE INTO memory_vectors (node, dim, vector) VALUES (?, ?, ?)", rows
            )
        )
