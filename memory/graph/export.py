"""The live memory graph as a file other tools read: JSON, or GraphML for Gephi and networkx.

Both formats stream: rows go from a reader connection straight to the output,
so exporting a large graph never holds it in memory. Forgotten nodes and
retired edges are left out (they stay in the database and its events).

Export is the way out of a damaged home, so it saves every row it can read:
text that is not valid UTF-8 is decoded with U+FFFD, and when the scan of a
table fails partway (a damaged page), the rest of its ids are read one by
one, each id that cannot be read counted as `unreadable` in the returned
counts, beside `nodes` and `edges`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any, TextIO

import sqlite_utils

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError
from loci.memory.graph.records import node_ref
from loci.memory.projects import DEFAULT_PROJECT

__all__ = ["FORMATS", "export_graph"]

FORMATS = ("json", "graphml")
# Both take the project (None: every project) as their one parameter; an edge is its source node's project's.
NODE_SQL = (
    "SELECT id, kind, text, name, meta, created, updated, uses, last_used, successes, failures, status, project"
    " FROM memory_nodes WHERE deleted IS NULL AND project = coalesce(?1, project)"
)
EDGE_SQL = (
    "SELECT id, src, dst, kind, label, weight, uses, co_success, co_failure, created, updated, last_used"
    " FROM memory_edges WHERE deleted IS NULL"
    " AND (CAST(?1 AS TEXT) IS NULL OR src IN (SELECT id FROM memory_nodes WHERE project = ?1))"
)
# When neither max(id) nor sqlite_sequence can be read, probe this many ids past the last one read.
PROBE_IDS = 10_000
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
    ("project", "string"),
)
EDGE_KEYS = (
    ("kind", "string"),
    ("label", "string"),
    ("weight", "double"),
    ("uses", "int"),
    ("co_success", "int"),
    ("co_failure", "int"),
)


async def export_graph(
    store: Store, out: TextIO, fmt: str = "json", *, project: str | None = DEFAULT_PROJECT
) -> dict[str, int]:
    """Write the live graph of `project` (`ALL`: of every project) to `out`; returns the counts written and
    the ids that could not be read."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; use json or graphml")
    writer = _json if fmt == "json" else _graphml

    def export(db: sqlite_utils.Database) -> dict[str, int]:
        lost = {"unreadable": 0}
        if not isinstance(db.conn, sqlite3.Connection):  # PostgreSQL keeps only valid UTF-8: nothing to salvage
            return {**writer(db, out, lost, project), **lost}
        factory = db.conn.text_factory
        db.conn.text_factory = lambda raw: raw.decode("utf-8", "replace")
        try:
            return {**writer(db, out, lost, project), **lost}
        finally:
            db.conn.text_factory = factory

    return await store.read(export)


def _rows(db: sqlite_utils.Database, sql: str, project: str | None, lost: dict[str, int]) -> Iterator[dict[str, Any]]:
    """The rows of `sql` by id; past a damaged page, id by id, counting those that cannot be read."""
    last = 0
    try:
        cursor = db.conn.execute(sql + " ORDER BY id", [project])
        names = [d[0] for d in cursor.description]
        for row in cursor:
            last = row[0]
            yield dict(zip(names, row, strict=True))
        return
    except sqlite3.DatabaseError:
        pass
    table = sql.split(" FROM ")[1].split()[0]
    names = [name.strip() for name in sql.removeprefix("SELECT ").split(" FROM ")[0].split(",")]
    for row_id in range(last + 1, _top(db.conn, table, last) + 1):
        try:
            row = db.conn.execute(sql + " AND id = ?2", [project, row_id]).fetchone()
        except sqlite3.DatabaseError:
            lost["unreadable"] += 1
            continue
        if row is not None:
            yield dict(zip(names, row, strict=True))


def _top(conn: sqlite3.Connection, table: str, last: int) -> int:
    """The highest id `table` may hold, from the table, else its sequence, else a bounded guess."""
    sources = ((f"SELECT max(id) FROM {table}", []), ("SELECT seq FROM sqlite_sequence WHERE name = ?", [table]))
    for sql, args in sources:
        try:
            found = conn.execute(sql, args).fetchone()
        except sqlite3.DatabaseError:
            continue
        if found and found[0] is not None:
            return int(found[0])
    return last + PROBE_IDS


def _meta(text: str | None) -> Any:
    try:
        return json.loads(text or "{}")
    except ValueError:
        return text  # damaged metadata is kept as the text it is


def _json(db: sqlite_utils.Database, out: TextIO, lost: dict[str, int], project: str | None) -> dict[str, int]:
    counts = {"nodes": 0, "edges": 0}
    out.write('{"nodes": [')
    for row in _rows(db, NODE_SQL, project, lost):
        row["meta"] = _meta(row["meta"])
        row["id"] = node_ref(row["id"])
        out.write(("," if counts["nodes"] else "") + "\n  " + json.dumps(row, ensure_ascii=False))
        counts["nodes"] += 1
    out.write('\n], "edges": [')
    for row in _rows(db, EDGE_SQL, project, lost):
        row["src"], row["dst"] = node_ref(row["src"]), node_ref(row["dst"])
        out.write(("," if counts["edges"] else "") + "\n  " + json.dumps(row, ensure_ascii=False))
        counts["edges"] += 1
    out.write("\n]}\n")
    return counts


def _graphml(db: sqlite_utils.Database, out: TextIO, lost: dict[str, int], project: str | None) -> dict[str, int]:
    counts = {"nodes": 0, "edges": 0}
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n')
    for owner, keys in (("node", NODE_KEYS), ("edge", EDGE_KEYS)):
        for name, kind in keys:
            out.write(f'  <key id="{owner[0]}_{name}" for="{owner}" attr.name="{name}" attr.type="{kind}"/>\n')
    out.write('  <graph id="loci-memory" edgedefault="directed">\n')
    for row in _rows(db, NODE_SQL, project, lost):
        out.write(f"    <node id={_attribute(node_ref(row['id']))}>{_data('n', NODE_KEYS, row)}</node>\n")
        counts["nodes"] += 1
    for row in _rows(db, EDGE_SQL, project, lost):
        ends = f"source={_attribute(node_ref(row['src']))} target={_attribute(node_ref(row['dst']))}"
        out.write(f'    <edge id="e{row["id"]}" {ends}>{_data("e", EDGE_KEYS, row)}</edge>\n')
        counts["edges"] += 1
    out.write("  </graph>\n</graphml>\n")
    return counts


def _data(prefix: str, keys: tuple[tuple[str, str], ...], row: dict[str, Any]) -> str:
    parts = []
    for name, _ in keys:
        value = row.get(name)
        if value is not None and value != "":
            parts.append(f'<data key="{prefix}_{name}">{_escape(_clean(str(value)))}</data>')
    return "".join(parts)


def _clean(text: str) -> str:
    """XML 1.0 cannot carry most control characters: drop them."""
    return "".join(c for c in text if c in "\t\n\r" or ord(c) >= 0x20)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attribute(text: str) -> str:
    return '"' + _escape(text).replace('"', "&quot;") + '"'
