"""What the page's graph view draws: a bounded piece of the memory graph.

The page never asks for the whole graph. It asks for one of three pieces,
each capped at `MAX_DRAWN` nodes, and then for how many live nodes and
edges the home holds, so it can say how much is not drawn:

- `top`: the most used nodes (newest first among equals) and the edges
  between them: the first view. A run's records (its episode, a procedure
  distilled from runs: memory/graph/run_records.py) are folded out of it, and
  `folded_runs` says how many: fifty run episodes took a third of the canvas
  from the memory itself; the Runs tab shows them, and `around` still draws
  one beside the facts it used;
- `recall`: what a search returns, by the same `Recall` as `memory_recall`
  (without counting a use: looking is not using), with the edges its
  activation spread along (`via`) and the nodes at their other ends;
- `around`: one node and its neighbours within one or two hops.

`node` is what a click shows: the node as `memory_get` reads it, its
neighbours as `memory_neighbors` lists them, and its history (the events
that made and changed it, each with its cause, and a procedure's source
episodes) as `loci memory history` prints it.

Each piece is nodes (id, kind, a short label, uses, status) and the edges
among them (id, ends, kind, weight); recall adds each hit's score and parts.
The totals are counts that scan the tables, so they are read apart
(`totals`): the page draws first and says what is not drawn after.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import sqlite_utils

from loci.memory.engines.dialects import dialect_of
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph
from loci.memory.graph.ops import adjacent_edges, fetch_nodes
from loci.memory.graph.recall import Recall
from loci.memory.graph.records import Edge, Node, node_ref, parse_node_id
from loci.memory.projects import ALL, in_project
from loci.tools.memory import MemoryTools, check_query

__all__ = ["DEFAULT_DRAWN", "MAX_DRAWN", "GraphView"]

DEFAULT_DRAWN = 300
MAX_DRAWN = 1_000
LABEL_CHARS = 60


def _node(node: Node) -> dict[str, Any]:
    label = node.name or node.text
    return {
        "id": node.ref,
        "kind": node.kind,
        "label": label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…",
        "uses": node.uses,
        "status": node.status,
    }


def _edge(edge: Edge) -> dict[str, Any]:
    return {
        "id": edge.id,
        "src": node_ref(edge.src),
        "dst": node_ref(edge.dst),
        "kind": edge.kind,
        "label": edge.label,
        "weight": round(edge.weight, 3),
    }


def _totals(conn: sqlite3.Connection, project: str | None) -> dict[str, int]:
    if project is ALL:  # every project: the plain counts, with no join
        nodes = conn.execute("SELECT count(*) FROM memory_nodes WHERE deleted IS NULL").fetchone()[0]
        edges = conn.execute("SELECT count(*) FROM memory_edges WHERE deleted IS NULL").fetchone()[0]
        return {"total_nodes": nodes, "total_edges": edges}
    nodes = conn.execute(
        "SELECT count(*) FROM memory_nodes WHERE deleted IS NULL AND project = ?", [project]
    ).fetchone()[0]
    edges = conn.execute(
        "SELECT count(*) FROM memory_edges e JOIN memory_nodes n ON n.id = e.src"
        " WHERE e.deleted IS NULL AND n.project = ?",
        [project],
    ).fetchone()[0]
    return {"total_nodes": nodes, "total_edges": edges}


def _piece(conn: sqlite3.Connection, nodes: dict[int, Node], extra_edges: Sequence[Edge] = ()) -> dict[str, Any]:
    """The nodes and every live edge between two of them."""
    edges = {e.id: e for e in adjacent_edges(conn, list(nodes)) if e.src in nodes and e.dst in nodes}
    edges.update({e.id: e for e in extra_edges if e.src in nodes and e.dst in nodes})
    return {
        "nodes": [_node(n) for n in nodes.values()],
        "edges": [_edge(e) for e in sorted(edges.values(), key=lambda e: e.id)],
    }


def _limit(limit: int) -> int:
    return max(1, min(int(limit), MAX_DRAWN))


class GraphView:
    """Bounded pieces of one graph for the page; reads only."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.recall_ = Recall(graph)

    async def totals(self) -> dict[str, int]:
        """How many live nodes and edges the home holds (two counts that scan: asked apart from the pieces)."""
        return await self.graph.store.read(lambda db: _totals(db.conn, self.graph.project))

    async def top(self, limit: int = DEFAULT_DRAWN) -> dict[str, Any]:
        n = _limit(limit)

        def read(db: sqlite_utils.Database) -> dict[str, Any]:
            # Sort the ids alone, then read the rows of the few kept: sorting whole rows costs ten times more.
            mine, params = in_project(self.graph.project)
            signature = dialect_of(db.conn).json_text("meta", "signature")
            runs = (
                " AND NOT EXISTS (SELECT 1 FROM memory_episodes x WHERE x.node = memory_nodes.id)"
                f" AND NOT (kind = 'procedural' AND {signature} IS NOT NULL)"
            )
            sql = f"SELECT id FROM memory_nodes WHERE deleted IS NULL{mine}{runs} ORDER BY uses DESC, id DESC LIMIT ?"
            ids = [row[0] for row in db.conn.execute(sql, [*params, n])]
            found = fetch_nodes(db.conn, ids, self.graph.project)
            sql = f"SELECT count(*) FROM memory_nodes WHERE deleted IS NULL{mine} AND NOT ({runs[5:]})"
            folded = db.conn.execute(sql, params).fetchone()[0]
            return {"view": "top", "folded_runs": folded, **_piece(db.conn, {i: found[i] for i in ids if i in found})}

        return await self.graph.store.read(read)

    async def recall(self, query: str, k: int = 20, limit: int = DEFAULT_DRAWN) -> dict[str, Any]:
        check_query(query)
        found = await self.recall_.recall(query, k=max(1, min(int(k), 100)), record=False)
        via = {r.via for r in found if r.via is not None}
        n = _limit(limit)

        def read(db: sqlite_utils.Database) -> dict[str, Any]:
            # Each hit reached through the graph names the edge most of its activation came by; it touches the hit.
            spread = [e for e in adjacent_edges(db.conn, [r.node.id for r in found]) if e.id in via]
            ids = [r.node.id for r in found] + [i for e in spread for i in (e.src, e.dst)]
            ids += [i for e in adjacent_edges(db.conn, ids[: len(found)]) for i in (e.src, e.dst)]
            nodes = fetch_nodes(db.conn, list(dict.fromkeys(ids))[:n], self.graph.project)
            return {
                "view": "recall",
                "query": query,
                "hits": [{"id": r.node.ref, "score": r.score, "parts": r.parts} for r in found],
                "spread": sorted(via),
                **_piece(db.conn, nodes, spread),
            }

        return await self.graph.store.read(read)

    async def around(self, ref: str, depth: int = 1, limit: int = DEFAULT_DRAWN) -> dict[str, Any]:
        node_id = parse_node_id(ref)
        center = await self.graph.get(node_id)
        near = await self.graph.neighbors(node_id, depth=max(1, min(int(depth), 2)), limit=min(_limit(limit), 200))

        def read(db: sqlite_utils.Database) -> dict[str, Any]:
            nodes = {center.id: center, **{n.node.id: n.node for n in near}}
            return {"view": "around", "center": center.ref, **_piece(db.conn, nodes, [n.edge for n in near])}

        return await self.graph.store.read(read)

    async def node(self, ref: str) -> dict[str, Any]:
        tools = MemoryTools(self.graph, self.recall_)
        shown = await tools.memory_get(ref)
        neighbours = await tools.memory_neighbors(ref, depth=1)
        history = await Evolution(self.graph).history(shown["id"])
        return {**shown, "neighbors": neighbours, "history": history}
