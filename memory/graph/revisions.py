"""Correcting without losing: the earlier texts of a node, and bringing a forgotten node back.

`memory_update` and `memory_forget` already append the old text to the
node's events (memory/graph/ops.py), with the reason given, if any, in the
event's `after`. `revisions` reads them back as the node's earlier texts,
oldest first, each with what replaced it, when, why and by whose cause.

`restore_node` undoes a forget: the node is live again (in the FTS index,
so recall sees it), and so are the edges the forget retired (the `unlink`
events whose cause is `forget mem:N`, since the node's last restore) whose
other end is live and whose key has no live edge meanwhile. A node whose
text (or name) is held by another live node cannot come back: the identity
rules allow one; the error names the other. All of it is one transaction,
recorded as a `restore` event with its reason and the edges brought back.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from loci.memory.errors import NotFoundError, UsageError
from loci.memory.graph.ops import live_node, log_event
from loci.memory.graph.pieces import index_texts
from loci.memory.graph.records import NODE_COLUMNS, Node, node_from_row, node_ref
from loci.memory.projects import ALL

__all__ = ["restore_node", "revisions"]


def revisions(conn: sqlite3.Connection, node_id: int) -> list[dict[str, Any]]:
    """The node's earlier texts and what happened to each: `{at, op, text, then, reason, cause}`, oldest first."""
    sql = (
        "SELECT at, op, before, after, cause FROM memory_events"
        " WHERE node = ? AND op IN ('update', 'delete', 'restore')"
    )
    found = []
    for at, op, before, after, cause in conn.execute(sql + " ORDER BY id", [node_id]):
        before, after = json.loads(before or "null") or {}, json.loads(after or "null") or {}
        then = {"update": after.get("text"), "delete": None, "restore": before.get("text")}[op]
        text = before.get("text") if op != "restore" else None
        found.append({"at": at, "op": op, "text": text, "then": then, "reason": after.get("reason"), "cause": cause})
    return found


def restore_node(
    conn: sqlite3.Connection,
    node_id: int,
    cause: str | None = None,
    reason: str | None = None,
    project: str | None = ALL,
) -> Node:
    """Bring a forgotten node (of `project`, when given) back with the edges its forget retired; the live node."""
    row = conn.execute(f"SELECT {NODE_COLUMNS} FROM memory_nodes WHERE id = ?", [node_id]).fetchone()
    if row is None or (project is not ALL and row[-1] != project):
        raise NotFoundError(f"no memory {node_ref(node_id)}")
    node = node_from_row(row)
    if node.deleted is None:
        raise UsageError(f"{node.ref} was not forgotten; nothing to restore")
    twin = _twin(conn, node)
    if twin is not None:
        raise UsageError(f"{node_ref(twin)} now holds what {node.ref} said; update or forget it first")
    conn.execute("UPDATE memory_nodes SET deleted = NULL WHERE id = ?", [node_id])
    index_texts(conn, [(node_id, node.text)])
    if node.name is not None:
        conn.execute(
            "INSERT INTO memory_names (rowid, name, type, observation) VALUES (?, ?, ?, '')",
            [node_id, node.name, str(node.meta.get("entityType") or "")],
        )
    edges = _relink(conn, node)
    after = {"reason": reason, "edges": edges} if reason else {"edges": edges}
    log_event(conn, "restore", node=node_id, before={"text": node.text}, after=after, cause=cause)
    return live_node(conn, node_id)


def _twin(conn: sqlite3.Connection, node: Node) -> int | None:
    if node.name is not None:
        found = conn.execute(
            "SELECT id FROM memory_nodes WHERE project = ? AND name = ? AND deleted IS NULL", [node.project, node.name]
        )
    else:
        found = conn.execute(
            "SELECT id FROM memory_nodes WHERE project = ? AND hash = (SELECT hash FROM memory_nodes WHERE id = ?)"
            " AND deleted IS NULL AND name IS NULL",
            [node.project, node.id],
        )
    row = found.fetchone()
    return row[0] if row else None


def _relink(conn: sqlite3.Connection, node: Node) -> list[int]:
    """Revive the edges retired by the node's last forget; their ids."""
    since = conn.execute(
        "SELECT coalesce(max(id), 0) FROM memory_events WHERE node = ? AND op = 'restore'", [node.id]
    ).fetchone()[0]
    retired = conn.execute(
        "SELECT edge FROM memory_events WHERE op = 'unlink' AND cause = ? AND id > ? ORDER BY id",
        [f"forget {node.ref}", since],
    ).fetchall()
    revived = []
    for (edge_id,) in retired:
        edge = conn.execute("SELECT src, dst, kind, label FROM memory_edges WHERE id = ?", [edge_id]).fetchone()
        if edge is None:
            continue
        ends_live = conn.execute(
            "SELECT count(*) FROM memory_nodes WHERE id IN (?, ?) AND (deleted IS NULL OR id = ?)",
            [edge[0], edge[1], node.id],
        ).fetchone()[0] == len({edge[0], edge[1]})
        clash = conn.execute(
            "SELECT 1 FROM memory_edges WHERE src = ? AND dst = ? AND kind = ? AND label = ? AND deleted IS NULL",
            list(edge),
        ).fetchone()
        if ends_live and clash is None:
            conn.execute("UPDATE memory_edges SET deleted = NULL WHERE id = ?", [edge_id])
            log_event(conn, "relink", edge=edge_id, after={"restored": node.ref}, cause=f"restore {node.ref}")
            revived.append(edge_id)
    return revived
