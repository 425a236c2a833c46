"""The graph's writes, as plain functions of a connection inside one transaction.

`Graph` (memory/graph/graph.py) runs these through `Store.write`, so a batch of a
thousand nodes is one `BEGIN IMMEDIATE ... COMMIT`: either all of it is on
disk or none of it is. Each function keeps the three derived structures in
step with `memory_nodes`: the FTS index holds exactly the live nodes, every
change appends an event, and forgetting a node also retires its edges.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from loci.memory.engines.dialects import dialect_of
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.graph.pieces import index_texts, unindex_text
from loci.memory.graph.records import (
    EDGE_COLUMNS,
    NODE_COLUMNS,
    Edge,
    Node,
    check_edge_kind,
    check_kinds,
    check_label,
    check_meta,
    check_text,
    content_hash,
    edge_from_row,
    node_from_row,
    node_ref,
)
from loci.memory.params import in_chunks
from loci.memory.projects import ALL

__all__ = [
    "NewNode",
    "adjacent_edges",
    "adjacent_weights",
    "fetch_nodes",
    "forget_node",
    "insert_edges",
    "insert_nodes",
    "live_node",
    "log_event",
    "record_use",
    "unlink_edge",
    "update_node",
    "upsert_edge",
]


# The columns a batch writes (name -> PostgreSQL type, for the dialect's `insert_many`).
_NODE_ROW = {
    "id": "bigint",
    "kind": "text",
    "text": "text",
    "name": "text",
    "hash": "text",
    "meta": "text",
    "created": "float8",
    "updated": "float8",
    "project": "text",
}
_ADD_EVENT_ROW = {"at": "float8", "op": "text", "node": "bigint", "after": "text", "cause": "text"}
_EDGE_ROW = {
    "src": "bigint",
    "dst": "bigint",
    "kind": "text",
    "weight": "float8",
    "created": "float8",
    "updated": "float8",
}
_LINK_EVENT_ROW = {"at": "float8", "op": "text", "edge": "bigint", "after": "text", "cause": "text"}


@dataclass(frozen=True)
class NewNode:
    """A node to remember; `name` makes it a named node (an entity), identified by name."""

    text: str
    kind: str = "semantic"
    meta: dict[str, Any] | None = None
    name: str | None = None

    def checked(self) -> NewNode:
        check_text(self.text)
        check_kinds(self.kind)
        check_meta(self.meta)
        if self.name is not None and not self.name.strip():
            raise UsageError("an entity name cannot be empty")
        return self


def log_event(
    conn: sqlite3.Connection,
    op: str,
    *,
    node: int | None = None,
    edge: int | None = None,
    before: Any = None,
    after: Any = None,
    cause: str | None = None,
) -> None:
    conn.execute(
        "INSERT INTO memory_events (at, op, node, edge, before, after, cause) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [time.time(), op, node, edge, _json(before), _json(after), cause],
    )


def insert_nodes(
    conn: sqlite3.Connection, items: Sequence[NewNode], cause: str | None = None, *, project: str
) -> list[tuple[int, bool]]:
    """Insert each node into `project`, or find its live twin there and count a use; `(id, created)` per item.

    The twins of unnamed nodes are looked up for the whole batch at once (by hash, through the partial
    index that makes them unique), and so are the live nodes of its names (by name, through theirs); a
    second item of the batch with the twin or the name of a new one is that node. Then the new nodes take
    their ids together (the dialect's `new_ids`: one past the largest on SQLite, whose write transaction
    keeps other writers out; the identity's sequence on PostgreSQL, which locks nothing), ascending in the
    order of `items`, and go in with one `executemany`, so a batch of thousands costs a few statements, not
    two per node."""
    now = time.time()
    digests = [content_hash(item.kind, item.text) for item in items]
    twins = _unnamed_twins(conn, project, [d for d, item in zip(digests, items, strict=True) if item.name is None])
    named = _named_twins(conn, project, [item.name for item in items if item.name is not None])
    fresh: list[int] = []  # the place in `items` of each new node, in order
    seen: dict[str, int] = {}  # an item's hash (or name) -> its ref: the id found (> 0), or -(1 + its place in `fresh`)
    refs: list[int] = []
    for i, (item, digest) in enumerate(zip(items, digests, strict=True)):
        key = digest if item.name is None else f"name:{item.name}"
        if key not in seen:
            found = twins.get(digest) if item.name is None else named.get(item.name)
            if found is None:
                fresh.append(i)
            seen[key] = found if found is not None else -len(fresh)
        refs.append(seen[key])
    ids = dialect_of(conn).new_ids(conn, "memory_nodes", len(fresh))
    created = set(fresh)
    rows: list[tuple[Any, ...]] = []
    fts_rows: list[tuple[int, str]] = []
    events: list[tuple[Any, ...]] = []
    added: dict[tuple[str, str | None], str | None] = {}  # the event's JSON, the same for every unnamed fact
    for i, node_id in zip(fresh, ids, strict=True):
        item = items[i]
        meta = json.dumps(item.meta) if item.meta else "{}"
        rows.append((node_id, item.kind, item.text, item.name, digests[i], meta, now, now, project))
        fts_rows.append((node_id, item.text))
        if (item.kind, item.name) not in added:
            added[item.kind, item.name] = _json({"kind": item.kind, "name": item.name})
        events.append((now, "add", node_id, added[item.kind, item.name], cause))
    results = [(ref if ref > 0 else ids[-ref - 1], i in created) for i, ref in enumerate(refs)]
    used = [(now, found) for (found, new), item in zip(results, items, strict=True) if not (new or item.name)]
    dialect_of(conn).insert_many(conn, "memory_nodes", _NODE_ROW, rows)
    if used:
        conn.executemany("UPDATE memory_nodes SET uses = uses + 1, last_used = ? WHERE id = ?", used)
    index_texts(conn, fts_rows)
    dialect_of(conn).insert_many(conn, "memory_events", _ADD_EVENT_ROW, events)
    return results


def _unnamed_twins(conn: sqlite3.Connection, project: str, digests: list[str]) -> dict[str, int]:
    """The live unnamed node of `project` with each of `digests`, where there is one: hash -> id."""
    found: dict[str, int] = {}
    for chunk, marks in in_chunks(list(dict.fromkeys(digests))):
        sql = (
            "SELECT hash, id FROM memory_nodes"
            f" WHERE project = ? AND hash IN ({marks}) AND deleted IS NULL AND name IS NULL"
        )
        found.update(conn.execute(sql, [project, *chunk]))
    return found


def _named_twins(conn: sqlite3.Connection, project: str, names: list[str]) -> dict[str, int]:
    """The live named node of `project` with each of `names`, where there is one: name -> id."""
    found: dict[str, int] = {}
    for chunk, marks in in_chunks(list(dict.fromkeys(names))):
        sql = f"SELECT name, id FROM memory_nodes WHERE project = ? AND name IN ({marks}) AND deleted IS NULL"
        found.update(conn.execute(sql, [project, *chunk]))
    return found


def live_node(conn: sqlite3.Connection, node_id: int, project: str | None = ALL) -> Node:
    """The live node `node_id`; a node of another project than `project` (when one is given) is not found."""
    row = conn.execute(f"SELECT {NODE_COLUMNS} FROM memory_nodes WHERE id = ?", [node_id]).fetchone()
    if row is None or (project is not ALL and row[-1] != project):
        raise NotFoundError(f"no memory {node_ref(node_id)}")
    node = node_from_row(row)
    if node.deleted is not None:
        raise NotFoundError(f"memory {node_ref(node_id)} was forgotten")
    return node


def fetch_nodes(conn: sqlite3.Connection, ids: Iterable[int], project: str | None = ALL) -> dict[int, Node]:
    """Live nodes by id (of `project` only, when one is given), in chunks under SQLite's parameter limit."""
    wanted = list(dict.fromkeys(ids))
    found: dict[int, Node] = {}
    for chunk, marks in in_chunks(wanted):
        sql = f"SELECT {NODE_COLUMNS} FROM memory_nodes WHERE id IN ({marks}) AND deleted IS NULL"
        for row in conn.execute(sql, chunk):
            if project is ALL or row[-1] == project:
                found[row[0]] = node_from_row(row)
    return found


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


def adjacent_weights(conn: sqlite3.Connection, ids: Sequence[int]) -> list[tuple[int, int, int, float]]:
    """`(edge id, src, dst, weight)` of the live edges touching any of `ids`, in `adjacent_edges`'s order: what
    spreading activation reads, without building an `Edge` of thirteen columns for each of a hundred rows."""
    found: list[tuple[int, int, int, float]] = []
    for chunk, marks in in_chunks(ids):
        sql = (
            f"SELECT id, src, dst, weight FROM memory_edges WHERE deleted IS NULL AND src IN ({marks})"
            f" UNION ALL SELECT id, src, dst, weight FROM memory_edges WHERE deleted IS NULL AND dst IN ({marks})"
        )
        found.extend(conn.execute(sql, chunk + chunk))
    return found


def update_node(
    conn: sqlite3.Connection,
    node_id: int,
    text: str,
    cause: str | None = None,
    reason: str | None = None,
    project: str | None = ALL,
) -> Node:
    """Replace a node's text (its identity follows the text), keeping its edges and counts."""
    check_text(text)
    node = live_node(conn, node_id, project)
    digest = content_hash(node.kind, text)
    if node.name is None:
        twin = conn.execute(
            "SELECT id FROM memory_nodes"
            " WHERE project = ? AND hash = ? AND deleted IS NULL AND name IS NULL AND id != ?",
            [node.project, digest, node_id],
        ).fetchone()
        if twin:
            raise UsageError(f"{node_ref(twin[0])} already says this; link to it or forget {node.ref}")
    now = time.time()
    unindex_text(conn, node_id, node.text)
    conn.execute("UPDATE memory_nodes SET text = ?, hash = ?, updated = ? WHERE id = ?", [text, digest, now, node_id])
    index_texts(conn, [(node_id, text)])
    conn.execute("DELETE FROM memory_vectors WHERE node = ?", [node_id])
    after = {"text": text, "reason": reason} if reason else {"text": text}
    log_event(conn, "update", node=node_id, before={"text": node.text}, after=after, cause=cause)
    return live_node(conn, node_id)


def forget_node(
    conn: sqlite3.Connection,
    node_id: int,
    cause: str | None = None,
    reason: str | None = None,
    project: str | None = ALL,
) -> Node:
    """Soft-delete a node and retire its edges; both stay in the file and in the events."""
    node = live_node(conn, node_id, project)
    now = time.time()
    unindex_text(conn, node_id, node.text)
    conn.execute("UPDATE memory_nodes SET deleted = ? WHERE id = ?", [now, node_id])
    edges = conn.execute(
        "SELECT id FROM memory_edges WHERE deleted IS NULL AND src = ?"
        " UNION SELECT id FROM memory_edges WHERE deleted IS NULL AND dst = ?",
        [node_id, node_id],
    ).fetchall()
    for (edge_id,) in edges:
        unlink_edge(conn, edge_id, cause=f"forget {node.ref}")
    conn.execute("DELETE FROM memory_names WHERE rowid = ?", [node_id])
    before = {"text": node.text, "kind": node.kind, "name": node.name}
    log_event(conn, "delete", node=node_id, before=before, after={"reason": reason} if reason else None, cause=cause)
    return node


def upsert_edge(
    conn: sqlite3.Connection,
    src: int,
    dst: int,
    kind: str = "related",
    *,
    label: str = "",
    weight: float | None = None,
    meta: dict[str, Any] | None = None,
    cause: str | None = None,
    allow_self: bool = False,
    project: str | None = ALL,
) -> tuple[Edge, bool]:
    """Link two live nodes of one project (`project`, when given); an existing live edge with the same key
    is returned (reweighted if asked)."""
    check_edge_kind(kind)
    check_label(label, "edge label")
    if src == dst and not allow_self:
        raise UsageError(f"cannot link {node_ref(src)} to itself")
    if weight is not None and not 0.0 <= weight <= 1.0:
        raise UsageError(f"an edge weight is between 0 and 1, not {weight}")
    source = live_node(conn, src, project)
    live_node(conn, dst, source.project)  # an edge never crosses projects
    now = time.time()
    key = [src, dst, kind, label]
    row = conn.execute(
        f"SELECT {EDGE_COLUMNS} FROM memory_edges"
        " WHERE src = ? AND dst = ? AND kind = ? AND label = ? AND deleted IS NULL",
        key,
    ).fetchone()
    if row is not None:
        edge = edge_from_row(row)
        if weight is not None and weight != edge.weight:
            conn.execute("UPDATE memory_edges SET weight = ?, updated = ? WHERE id = ?", [weight, now, edge.id])
            log_event(
                conn, "reweight", edge=edge.id, before={"weight": edge.weight}, after={"weight": weight}, cause=cause
            )
            edge = Edge(**{**edge.__dict__, "weight": weight, "updated": now})
        return edge, False
    edge_id = conn.execute(
        "INSERT INTO memory_edges (src, dst, kind, label, weight, meta, created, updated)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        [*key, 0.5 if weight is None else weight, json.dumps(meta) if meta else None, now, now],
    ).fetchone()[0]
    log_event(conn, "link", edge=edge_id, after={"src": src, "dst": dst, "kind": kind, "label": label}, cause=cause)
    row = conn.execute(f"SELECT {EDGE_COLUMNS} FROM memory_edges WHERE id = ?", [edge_id]).fetchone()
    return edge_from_row(row), True


def insert_edges(
    conn: sqlite3.Connection,
    links: Sequence[tuple[int, int, str, float]],
    cause: str | None = None,
    project: str | None = ALL,
) -> int:
    """Bulk-add `(src, dst, kind, weight)` edges between live nodes; existing keys are skipped.

    Returns how many were new."""
    ends = sorted({n for src, dst, _, _ in links for n in (src, dst)})
    found = fetch_nodes(conn, ends, project)
    missing = set(ends) - set(found)
    if missing:
        raise NotFoundError(f"no memory {node_ref(min(missing))}")
    for src, dst, _, _ in links:
        if found[src].project != found[dst].project:
            raise NotFoundError(f"no memory {node_ref(dst)} in the project of {node_ref(src)}")
    now = time.time()
    for src, dst, kind, weight in links:
        check_edge_kind(kind)
        if src == dst or not 0.0 <= weight <= 1.0:
            raise UsageError(f"cannot link {node_ref(src)} to {node_ref(dst)} with weight {weight}")
    rows = [(src, dst, kind, weight, now, now) for src, dst, kind, weight in links]
    added = dialect_of(conn).insert_new(conn, "memory_edges", _EDGE_ROW, rows, "id, src, dst, kind")
    events = [
        (now, "link", edge_id, _json({"src": src, "dst": dst, "kind": kind}), cause)
        for edge_id, src, dst, kind in added
    ]
    dialect_of(conn).insert_many(conn, "memory_events", _LINK_EVENT_ROW, events)
    return len(added)


def unlink_edge(conn: sqlite3.Connection, edge_id: int, cause: str | None = None) -> None:
    row = conn.execute(
        "SELECT src, dst, kind, label FROM memory_edges WHERE id = ? AND deleted IS NULL", [edge_id]
    ).fetchone()
    if row is None:
        return
    conn.execute("UPDATE memory_edges SET deleted = ? WHERE id = ?", [time.time(), edge_id])
    before = dict(zip(("src", "dst", "kind", "label"), row, strict=True))
    log_event(conn, "unlink", edge=edge_id, before=before, cause=cause)


def record_use(conn: sqlite3.Connection, node_ids: Sequence[int], edge_ids: Sequence[int] = ()) -> None:
    """Count one activation of each node and edge (`uses`, `last_used`), which recall's ranking reads; an id given
    twice counts twice. One statement a table for the ids counted alike (all of them, mostly): a recall's few
    dozen rows, which one `executemany` of a statement a row cost more to send than to change."""
    now = time.time()
    for table, ids in (("memory_nodes", node_ids), ("memory_edges", edge_ids)):
        times: dict[int, list[int]] = {}
        for item, count in Counter(ids).items():
            times.setdefault(count, []).append(item)
        for count, counted in times.items():
            for chunk, marks in in_chunks(counted):
                sql = f"UPDATE {table} SET uses = uses + ?, last_used = ? WHERE id IN ({marks})"
                conn.execute(sql, [count, now, *chunk])


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)
