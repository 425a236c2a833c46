"""Memory rather than conversations: Loci's own export, and the reference memory server's `memory.jsonl`.

- `loci memory export` JSON (`{"nodes": [...], "edges": [...]}`, ids as
  `mem:N`): each node is found by its identity (an entity by its name, any
  other node by its kind and text) or added with its kind, text and
  metadata; each edge is added between the nodes its ends became, with its
  kind, label and weight. Importing an export into the home it came from,
  or twice, adds nothing: the round trip is the identity.
- `memory.jsonl` of `@modelcontextprotocol/server-memory`: a line per entity
  (`{"type": "entity", "name", "entityType", "observations"}`) or relation
  (`{"type": "relation", "from", "to", "relationType"}`), stored as the
  compatible server stores them (memory/graph/entities_ops.py), so
  `loci serve memory --compat` serves them at once.

Each file is one transaction; a bad node, edge or line names itself, and a field of the wrong type
(memory/imports/shapes.py) refuses its line rather than be stored as something else.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from loci.memory.errors import UsageError
from loci.memory.graph.entities_ops import CAUSE, OBSERVATION, add_observation, ensure_entity
from loci.memory.graph.graph import Graph
from loci.memory.graph.ops import NewNode, insert_nodes, upsert_edge
from loci.memory.graph.records import content_hash, parse_node_id
from loci.memory.imports import shapes
from loci.memory.imports.records import bad, json_lines, load_json
from loci.memory.imports.shapes import BadField, Place
from loci.memory.projects import writable_project

__all__ = ["MemoryCounts", "import_export", "import_reference", "is_export", "is_reference"]


@dataclass(frozen=True)
class MemoryCounts:
    nodes: int
    edges: int


def is_export(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("nodes"), list) and isinstance(data.get("edges"), list)


def is_reference(record: dict[str, Any]) -> bool:
    return record.get("type") in ("entity", "relation") and ("name" in record or "from" in record)


async def import_export(graph: Graph, text: str, source: str) -> MemoryCounts:
    """Add the nodes and edges of a `loci memory export` JSON file that the graph's project does not hold."""
    project = writable_project(graph.project)
    data = load_json(text, source)
    if not is_export(data):
        bad(source, "line 1", 'not a Loci export (an object with "nodes" and "edges" lists)')

    def write(db: sqlite_utils.Database) -> MemoryCounts:
        conn, ids, nodes, edges = db.conn, {}, 0, 0
        for index, node in enumerate(data["nodes"], start=1):
            if not isinstance(node, dict):
                bad(source, f"node {index}", "a node must be an object")
            try:
                ids[str(node["id"])], created = _node(conn, node, project, Place(source, f"node {index}"))
            except BadField:
                raise
            except (KeyError, TypeError, UsageError) as exc:
                bad(source, f"node {index}", f"not a node of a Loci export ({_why(exc)})")
            nodes += created
        for index, edge in enumerate(data["edges"], start=1):
            if not isinstance(edge, dict):
                bad(source, f"edge {index}", "an edge must be an object")
            place = Place(source, f"edge {index}")
            kind, label = shapes.text(edge, "kind", place), shapes.optional_text(edge, "label", place) or ""
            weight = shapes.number(edge, "weight", place, 0.5)
            try:
                src, dst = ids[str(edge["src"])], ids[str(edge["dst"])]
                _, created = upsert_edge(
                    conn, src, dst, kind, label=label, weight=weight, cause="import", project=project
                )
            except BadField:
                raise
            except (KeyError, TypeError, ValueError, UsageError) as exc:
                bad(source, f"edge {index}", f"not an edge between the file's nodes ({_why(exc)})")
            if label == OBSERVATION:
                _index_observation(conn, dst)
            edges += created
        return MemoryCounts(nodes, edges)

    return await graph.store.write(write)


def _node(conn: sqlite3.Connection, node: dict[str, Any], project: str, place: Place) -> tuple[int, bool]:
    meta = shapes.mapping(node, "meta", place)
    if name := shapes.optional_text(node, "name", place):
        entity_type = None if meta.get("placeholder") else str(meta.get("entityType") or "")
        return ensure_entity(conn, name, entity_type, project)
    kind, body = shapes.text(node, "kind", place), shapes.text(node, "text", place)
    parse_node_id(node["id"])
    found = conn.execute(
        "SELECT id FROM memory_nodes WHERE project = ? AND hash = ? AND deleted IS NULL AND name IS NULL",
        [project, content_hash(kind, body)],
    ).fetchone()
    if found:
        return found[0], False
    [(node_id, created)] = insert_nodes(conn, [NewNode(body, kind, meta).checked()], "import", project=project)
    return node_id, created


def _index_observation(conn: sqlite3.Connection, fact: int) -> None:
    """An observation is findable by the compatible server's substring search (memory_names)."""
    if conn.execute("SELECT 1 FROM memory_names WHERE rowid = ?", [fact]).fetchone() is None:
        said = conn.execute("SELECT text FROM memory_nodes WHERE id = ?", [fact]).fetchone()[0]
        conn.execute("INSERT INTO memory_names (rowid, name, type, observation) VALUES (?, '', '', ?)", [fact, said])


async def import_reference(graph: Graph, text: str, source: str) -> MemoryCounts:
    """Add the entities, observations and relations of a reference server's `memory.jsonl` to the graph's project."""
    lines = list(json_lines(text, source))
    project = writable_project(graph.project)

    def write(db: sqlite_utils.Database) -> MemoryCounts:
        conn, nodes, edges = db.conn, 0, 0
        for line, record in lines:
            try:
                place = Place(source, f"line {line}")
                if record.get("type") == "entity":
                    name, entity_type = (
                        shapes.text(record, "name", place),
                        shapes.text(record, "entityType", place, empty=True),
                    )
                    observations = shapes.texts(record, "observations", place)
                    node_id, created = ensure_entity(conn, name, entity_type, project)
                    nodes += created
                    edges += sum(add_observation(conn, node_id, o, project) for o in observations)
                elif record.get("type") == "relation":
                    src = ensure_entity(conn, shapes.text(record, "from", place), None, project)[0]
                    dst = ensure_entity(conn, shapes.text(record, "to", place), None, project)[0]
                    label = shapes.text(record, "relationType", place)
                    edges += upsert_edge(
                        conn, src, dst, "related", label=label, cause=CAUSE, allow_self=True, project=project
                    )[1]
                else:
                    raise UsageError(f"unknown type {record.get('type')!r}; use entity or relation")
            except BadField:
                raise
            except (KeyError, UsageError) as exc:
                bad(source, f"line {line}", f"not an entity or relation of memory.jsonl ({_why(exc)})")
        return MemoryCounts(nodes, edges)

    return await graph.store.write(write)


def _why(exc: Exception) -> str:
    return f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
