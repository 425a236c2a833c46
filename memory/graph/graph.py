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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from loci.memory.engines.dialects import dialect_of
from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.embed import Embedder, pack_vector
from loci.memory.graph.ops import (
    NewNode,
    adjacent_edges,
    fetch_nodes,
    forget_node,
    insert_edges,
    insert_nodes,
    live_node,
    record_use,
    update_node,
    upsert_edge,
)
from loci.memory.graph.records import (
    EDGE_KINDS,
    NODE_KINDS,
    Edge,
    Node,
    check_kinds,
)
from loci.memory.graph.revisions import restore_node
from loci.memory.projects import ALL, DEFAULT_PROJECT, check_project, in_project, writable_project

__all__ = ["Graph", "Neighbor", "NewNode", "infer_edge_kind"]

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


class Graph:
    """The memory graph of one project in one `Store`; ids are integers (shown to people as `mem:N`).

    It reads and writes only the nodes of `project` (memory/projects.py): a node
    of another project is not found. `project=ALL` reads every project and
    refuses to write."""

    def __init__(
        self, store: Store, embedder: Embedder | None = None, *, project: str | None = DEFAULT_PROJECT
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.project = project if project is ALL else check_project(project)

    def in_project(self, project: str | None) -> Graph:
        """The same graph seen from another project (or from every one, with `ALL`)."""
        return self if project == self.project else Graph(self.store, self.embedder, project=project)

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
        project = writable_project(self.project)

        def write(db: sqlite_utils.Database) -> tuple[Node, bool]:
            conn = db.conn
            [(node_id, created)] = insert_nodes(conn, [item], cause, project=project)
            for other in targets:
                other_kind = live_node(conn, other, project).kind
                upsert_edge(conn, node_id, other, infer_edge_kind(kind, other_kind), cause=cause, project=project)
            return live_node(conn, node_id), created

        node, created = await self.store.write(write)
        if created:
            await self._embed([(node.id, node.text)])
        return node, created

    async def add_many(self, items: Sequence[NewNode], cause: str | None = None) -> list[tuple[int, bool]]:
        """Remember many nodes in one transaction; `(id, created)` for each, in order."""
        checked = [item.checked() for item in items]
        project = writable_project(self.project)
        results = await self.store.write(lambda db: insert_nodes(db.conn, checked, cause, project=project))
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
            lambda db: upsert_edge(
                db.conn, src, dst, kind, label=label, weight=weight, cause=cause, project=self.project
            )
        )

    async def link_many(self, links: Sequence[tuple[int, int, str, float]], cause: str | None = None) -> int:
        """Add many `(src, dst, kind, weight)` edges in one transaction; returns how many were new."""
        batch = list(links)
        return await self.store.write(lambda db: insert_edges(db.conn, batch, cause, self.project))

    async def update(self, node_id: int, text: str, cause: str | None = None, reason: str | None = None) -> Node:
        node = await self.store.write(lambda db: update_node(db.conn, node_id, text, cause, reason, self.project))
        await self._embed([(node.id, node.text)])
        return node

    async def forget(self, node_id: int, cause: str | None = None, reason: str | None = None) -> Node:
        return await self.store.write(lambda db: forget_node(db.conn, node_id, cause, reason, self.project))

    async def restore(self, node_id: int, cause: str | None = None, reason: str | None = None) -> Node:
        """Bring a forgotten node back with the edges its forget retired (memory/graph/revisions.py)."""
        return await self.store.write(lambda db: restore_node(db.conn, node_id, cause, reason, self.project))

    async def get(self, node_id: int) -> Node:
        return await self.store.read(lambda db: live_node(db.conn, node_id, self.project))

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
            live_node(db.conn, node_id, self.project)
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
            nodes = fetch_nodes(db.conn, reached, self.project)
            found = [Neighbor(n, *reached[n.id]) for n in nodes.values() if n.kind in wanted]
            return sorted(found, key=lambda x: (x.hops, -x.edge.weight, x.node.id))[:limit]

        return await self.store.read(read)

    async def record_use(self, node_ids: Sequence[int], edge_ids: Sequence[int] = ()) -> None:
        if node_ids or edge_ids:
            await self.store.write_bounded(lambda db: record_use(db.conn, node_ids, edge_ids))

    async def history(self, node_id: int, limit: int = 20) -> list[dict[str, Any]]:
        """The latest events of one node of this project (a forgotten one too), newest first."""
        mine, params = in_project(self.project, "n.project")
        sql = (
            "SELECT e.at, e.op, e.before, e.after, e.cause FROM memory_events e"
            f" JOIN memory_nodes n ON n.id = e.node WHERE e.node = ?{mine} ORDER BY e.id DESC LIMIT ?"
        )
        columns = ("at", "op", "before", "after", "cause")
        rows = await self.store.read(lambda db: db.conn.execute(sql, [node_id, *params, limit]).fetchall())
        return [dict(zip(columns, row, strict=True)) for row in rows]

    async def stats(self) -> dict[str, Any]:
        """Counts of live nodes and edges by kind, forgotten ones, and events, of this project; the home's size
        (`db_bytes`) for every project's view, the characters of this project's memories (`memory_chars`) else."""

        def read(db: sqlite_utils.Database) -> dict[str, Any]:
            conn = db.conn
            nodes = dict.fromkeys(NODE_KINDS, 0)
            mine, params = in_project(self.project, "n.project")  # an edge counts in its source's project
            nodes.update(
                conn.execute(
                    f"SELECT kind, count(*) FROM memory_nodes n WHERE deleted IS NULL{mine} GROUP BY kind", params
                ).fetchall()
            )
            edges = dict.fromkeys(EDGE_KINDS, 0)
            edges.update(
                conn.execute(
                    "SELECT e.kind, count(*) FROM memory_edges e JOIN memory_nodes n ON n.id = e.src"
                    f" WHERE e.deleted IS NULL{mine} GROUP BY e.kind",
                    params,
                ).fetchall()
            )

            def one(sql: str, *params: object) -> int:
                return conn.execute(sql, params).fetchone()[0]

            found: dict[str, Any] = {
                "project": self.project,
                "nodes": sum(nodes.values()),
                "nodes_by_kind": nodes,
                "edges": sum(edges.values()),
                "edges_by_kind": edges,
                "forgotten_nodes": one(f"SELECT count(*) FROM memory_nodes n WHERE deleted IS NOT NULL{mine}", *params),
                "vectors": one(
                    f"SELECT count(*) FROM memory_vectors v JOIN memory_nodes n ON n.id = v.node WHERE 1 = 1{mine}",
                    *params,
                ),
                "events": one(  # a node's events, and an edge's, in its source's project
                    f"SELECT count(*) FROM memory_events e WHERE e.node IN (SELECT n.id FROM memory_nodes n"
                    f" WHERE 1 = 1{mine}) OR e.edge IN (SELECT d.id FROM memory_edges d JOIN memory_nodes n"
                    f" ON n.id = d.src WHERE 1 = 1{mine})",
                    *params,
                    *params,
                ),
            }
            if self.project is not ALL:  # one project's view: its own size, never the home's
                text = f"SELECT coalesce(sum(length(n.text) + length(n.meta)), 0) FROM memory_nodes n WHERE 1 = 1{mine}"
                found["memory_chars"] = one(text, *params)
            else:  # the home's size, and the live nodes of each project; one project's view names no other
                found["db_bytes"] = one(dialect_of(conn).home_bytes())
                found["projects"] = dict(
                    conn.execute(
                        "SELECT project, count(*) FROM memory_nodes WHERE deleted IS NULL GROUP BY project"
                    ).fetchall()
                )
            return found

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
                "INSERT INTO memory_vectors (node, dim, vector) VALUES (?, ?, ?)"
                " ON CONFLICT (node) DO UPDATE SET dim = excluded.dim, vector = excluded.vector",
                rows,
            )
        )
