"""Granularity: merge near-duplicate facts, split overloaded ones.

Both are graph writes inside the refinement job's transaction, each logged
with its cause.

Merge: a fact's lexical look-alikes (the facts holding all of its words)
whose word sets have a Jaccard similarity of at least `merge_similarity` are the same fact
said twice. The older node survives; it takes the union of both nodes' edges
(an edge both had keeps the larger weight and the sum of the counts), their
use and outcome counts, and `merged_from` in its metadata; the younger node
is forgotten (soft), so its history stays.

Split (the deterministic rule): a fact longer than `split_chars` is cut at
paragraph, then sentence bounds into parts under the limit; each part is a
new fact with `split_from` in its metadata, linked to every neighbour of the
original that shares a word with it (all neighbours when none does), and the
original is forgotten. A message someone said (a node with a `speaker`, as a
conversation's turns are, memory/graph/conversation.py) is never split: it is
a record kept whole, read back and exported whole, and a long one is
already found by its pieces (memory/graph/pieces.py). Splitting one forgot
the turn itself, so its id no longer led to what was said (on BEAM dev,
`bench evolution --data` split two long assistant turns).
"""

from __future__ import annotations

import json
import re
import sqlite3

from loci.memory.engines.dialects import dialect_of
from loci.memory.evolution.params import EvolutionParams
from loci.memory.graph.fts.index import text_index
from loci.memory.graph.ops import NewNode, forget_node, insert_nodes, live_node, log_event, upsert_edge
from loci.memory.graph.records import EDGE_COLUMNS, edge_from_row
from loci.memory.graph.terms import query_terms

__all__ = ["look_alikes", "merge_nodes", "split_node", "split_text"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
MATCH_TERMS = 16


def _words(text: str) -> set[str]:
    return set(query_terms(text))


def look_alikes(conn: sqlite3.Connection, node_id: int, params: EvolutionParams) -> tuple[int, list[int]]:
    """How many candidates were compared, and the live facts near-identical to `node_id`.

    Candidates hold every word of the fact (the full-text index's AND, memory/graph/fts/, which costs
    what its rarest word costs, not what the graph's size does); a twin missing one of this fact's words
    is found from its own side, when it is refined."""
    node = live_node(conn, node_id)
    words = _words(node.text)
    if node.kind != "semantic" or not words:
        return 0, []
    terms = sorted(words, key=lambda w: (-len(w), w))[:MATCH_TERMS]
    rows = text_index(conn).holding_every(conn, terms, "semantic", node.project, params.merge_candidates + 1)
    found = []
    for other, text in rows:
        if other == node_id:
            continue
        theirs = _words(text)
        union = words | theirs
        if union and len(words & theirs) / len(union) >= params.merge_similarity:
            found.append(other)
    return len(rows), found


def merge_nodes(conn: sqlite3.Connection, keep: int, drop: int, cause: str) -> int:
    """Fold `drop` into `keep` (union of edges, summed counts); returns how many edges moved."""
    kept, dropped = live_node(conn, keep), live_node(conn, drop)
    rows = conn.execute(
        f"SELECT {EDGE_COLUMNS} FROM memory_edges WHERE deleted IS NULL AND (src = ? OR dst = ?)", [drop, drop]
    ).fetchall()
    moved = 0
    latest = dialect_of(conn).greatest("coalesce(last_used, 0)", "coalesce(?, 0)")
    for edge in map(edge_from_row, rows):
        src, dst = (keep if edge.src == drop else edge.src), (keep if edge.dst == drop else edge.dst)
        if src == dst:
            continue
        twin, created = upsert_edge(conn, src, dst, edge.kind, label=edge.label, weight=None, cause=cause)
        conn.execute(
            "UPDATE memory_edges SET weight = ?, uses = uses + ?, co_success = co_success + ?,"
            f" co_failure = co_failure + ?, last_used = {latest} WHERE id = ?",
            [
                edge.weight if created else max(edge.weight, twin.weight),
                edge.uses,
                edge.co_success,
                edge.co_failure,
                edge.last_used,
                twin.id,
            ],
        )
        moved += 1
    meta = dict(kept.meta)
    meta["merged_from"] = [*meta.get("merged_from", []), drop]
    conn.execute(
        "UPDATE memory_nodes SET uses = uses + ?, successes = successes + ?, failures = failures + ?, meta = ?"
        " WHERE id = ?",
        [dropped.uses, dropped.successes, dropped.failures, json.dumps(meta), keep],
    )
    log_event(conn, "merge", node=keep, before={"text": dropped.text, "id": drop}, after={"edges": moved}, cause=cause)
    forget_node(conn, drop, cause=f"{cause}: merged into mem:{keep}")
    return moved


def split_text(text: str, limit: int) -> list[str]:
    """Parts of `text` under `limit` characters, cut at paragraphs, then sentences, then words."""
    pieces = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    if len(pieces) < 2:
        pieces = [p for p in _SENTENCE.split(text) if p.strip()]
    parts: list[str] = []
    for piece in pieces:
        while len(piece) > limit:
            cut = piece.rfind(" ", 0, limit)
            cut = cut if cut > 0 else limit
            parts.append(piece[:cut])
            piece = piece[cut:].strip()
        if parts and len(parts[-1]) + len(piece) + 1 <= limit:
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    return [p.strip() for p in parts if p.strip()]


def split_node(conn: sqlite3.Connection, node_id: int, params: EvolutionParams, cause: str) -> list[int]:
    """Split an overloaded fact into parts; returns the new ids (none when it cannot be cut, or is a message)."""
    node = live_node(conn, node_id)
    if node.meta.get("speaker"):
        return []
    parts = split_text(node.text, params.split_chars)
    if len(parts) < 2:
        return []
    rows = conn.execute(
        f"SELECT {EDGE_COLUMNS} FROM memory_edges WHERE deleted IS NULL AND (src = ? OR dst = ?)", [node_id, node_id]
    ).fetchall()
    edges = [edge_from_row(r) for r in rows]
    forget_node(conn, node_id, cause=f"{cause}: split")
    items = [NewNode(p, "semantic", {**node.meta, "split_from": node_id}) for p in parts]
    made = insert_nodes(conn, items, cause, project=node.project)
    ids = [i for i, _ in made]
    for edge in edges:
        other = edge.dst if edge.src == node_id else edge.src
        other_words = _words(live_node_text(conn, other))
        targets = [i for i, p in zip(ids, parts, strict=True) if _words(p) & other_words] or ids
        for target in targets:
            src, dst = (target, other) if edge.src == node_id else (other, target)
            if src != dst:
                upsert_edge(conn, src, dst, edge.kind, label=edge.label, weight=edge.weight, cause=cause)
    log_event(conn, "split", node=node_id, after={"parts": ids}, cause=cause)
    return ids


def live_node_text(conn: sqlite3.Connection, node_id: int) -> str:
    row = conn.execute("SELECT text FROM memory_nodes WHERE id = ? AND deleted IS NULL", [node_id]).fetchone()
    return row[0] if row else ""
