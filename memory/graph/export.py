"""The live memory graph as a file other tools read: JSON, or GraphML for Gephi and networkx.

Both formats stream: rows go from a reader connection straight to the output,
so exporting a large graph never holds it in memory. Forgotten nodes and
retired edges are left out (they stay in the database and its events).
"""

from __future__ import annotations

import json
from typing import Any, TextIO
from xml.sax.saxutils import escape, quoteattr

import sqlite_utils

from memory.errors import UsageError
from memory.graph.schema import node_ref
from memory.store import Store

__all__ = ["FORMATS", "export_graph"]

FORMATS = ("json", "graphml")
NODE_SQL = (
    "SELECT id, kind, text, name, meta, created, updated, uses, last_used, successes, failures, status"
    " FROM memory_nodes WHERE deleted IS NULL ORDER BY id"
)
EDGE_SQL = (
    "SELECT id, src, dst, kind, label, weight, uses, co_success, co_failure, created, updated, last_used"
    " FROM memory_edges WHERE deleted IS NULL ORDER BY id"
)
NODE_KEYS = (
    ("kind", "string"),
    ("text", "string"),
    ("name", "string"),
    ("meta", "string"),
    ("uses", "int"),
    ("successes", "int"),
    ("failures", "int"),
    ("status", "string"),
    ("created", "double"),
)
EDGE_KEYS = (
    ("kind", "string"),
    ("label", "string"),
    ("weight", "double"),
    ("uses", "int"),
    ("co_success", "int"),
    ("co_failure", "int"),
)


async def export_graph(store: Store, out: TextIO, fmt: str = "json") -> dict[str, int]:
    """Write the live graph to `out`; returns the counts written."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; use json or graphml")
    writer = _json if fmt == "json" else _graphml
    return await store.read(lambda db: writer(db, out))


def _rows(db: sqlite_utils.Database, sql: str) -> Any:
    cursor = db.conn.execute(sql)
    names = [d[0] for d in cursor.description]
    for row in cursor:
        yield dict(zip(names, row, strict=True))


def _json(db: sqlite_utils.Database, out: TextIO) -> dict[str, int]:
    counts = {"nodes": 0, "edges": 0}
    out.write('{"nodes": [')
    for row in _rows(db, NODE_SQL):
        row["meta"] = json.loads(row["meta"] or "{}")
        row["id"] = node_ref(row["id"])
        out.write(("," if counts["nodes"] else "") + "\n  " + json.dumps(row, ensure_ascii=False))
        counts["nodes"] += 1
    out.write('\n], "edges": [')
    for row in _rows(db, EDGE_SQL):
        row["src"], row["dst"] = node_ref(row["src"]), node_ref(row["dst"])
        out.write(("," if counts["edges"] else "") + "\n  " + json.dumps(row, ensure_ascii=False))
        counts["edges"] += 1
    out.write("\n]}\n")
    return counts


def _graphml(db: sqlite_utils.Database, out: TextIO) -> dict[str, int]:
    counts = {"nodes": 0, "edges": 0}
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n')
    for owner, keys in (("node", NODE_KEYS), ("edge", EDGE_KEYS)):
        for name, kind in keys:
            out.write(f'  <key id="{owner[0]}_{name}" for="{owner}" attr.name="{name}" attr.type="{kind}"/>\n')
    out.write('  <graph id="loci-memory" edgedefault="directed">\n')
    for row in _rows(db, NODE_SQL):
        out.write(f"    <node id={quoteattr(node_ref(row['id']))}>{_data('n', NODE_KEYS, row)}</node>\n")
        counts["nodes"] += 1
    for row in _rows(db, EDGE_SQL):
        ends = f"source={quoteattr(node_ref(row['src']))} target={quoteattr(node_ref(row['dst']))}"
        out.write(f'    <edge id="e{row["id"]}" {ends}>{_data("e", EDGE_KEYS, row)}</edge>\n')
        counts["edges"] += 1
    out.write("  </graph>\n</graphml>\n")
    return counts


def _data(prefix: str, keys: tuple[tuple[str, str], ...], row: dict[str, Any]) -> str:
    parts = []
    for name, _ in keys:
        value = row.get(name)
        if value is not None and value != "":
            parts.append(f'<data key="{prefix}_{name}">{escape(_clean(str(value)))}</data>')
    return "".join(parts)


def _clean(text: str) -> str:
    """XML 1.0 cannot carry most control characters: drop them."""
    return "".join(c for c in text if c in "\t\n\r" or ord(c) >= 0x20)
