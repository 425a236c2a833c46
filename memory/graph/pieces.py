"""How a node's text enters the BM25 index: whole when it is short, in pieces when it is long.

A node keeps its whole text in `memory_nodes`, whatever its length (up to
`MAX_TEXT_CHARS`, memory/graph/records.py), and is read, shown and exported
whole. The index is another matter: one FTS5 row for a 100,000-character
message would let it match every query a little and none well, and BM25's
length norm would bury the one paragraph that answers. So a text up to
`LONG_CHARS` is one row of `memory_fts` keyed by the node's id (as every
node was before), and a longer one is cut into pieces of about
`PIECE_CHARS`, at a line break or a space where there is one, each a row of
`memory_fts` keyed by minus the id of its `memory_pieces` row, which holds
the node and the piece's character span. A match on a piece is a match on
its node (`node_of`): recall ranks the node by its best piece and returns the
node, never the piece.

All pieces share one index with the short nodes, so their BM25 statistics
are on one scale. `memory_fts` keeps `memory_nodes` as its external content;
the pieces' rows have no content row there, so nothing reads their columns
back (only rowids and `bm25()`), and removing a piece gives its text again
from the node's span. `reindex` fills an empty index from the graph. These functions run inside the caller's transaction
(memory/graph/ops.py, memory/graph/revisions.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from loci.memory.engines.dialects import dialect_of

__all__ = ["LONG_CHARS", "NODE_OF_ROW", "PIECE_CHARS", "index_texts", "pieces_of", "reindex", "spans", "unindex_text"]

LONG_CHARS = 16_000
PIECE_CHARS = 4_000
# The node a row of memory_fts (aliased f) stands for: itself, or the node of its piece.
NODE_OF_ROW = "CASE WHEN f.rowid < 0 THEN (SELECT node FROM memory_pieces p WHERE p.id = -f.rowid) ELSE f.rowid END"


def spans(text: str, size: int | None = None) -> list[tuple[int, int]]:
    """`(start, end)` of the pieces of `text`: about `size` characters each, ended at the last line break (or
    else space) of their second half, so a piece rarely cuts a word; together they cover the text exactly."""
    size = size or PIECE_CHARS
    out: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            half = start + size // 2
            cut = text.rfind("\n", half, end)
            if cut < 0:
                cut = text.rfind(" ", half, end)
            end = cut + 1 if cut >= 0 else end
        out.append((start, end))
        start = end
    return out


def index_texts(conn: sqlite3.Connection, rows: Iterable[tuple[int, str]]) -> None:
    """Add each `(node id, text)` to the BM25 index, whole or in pieces."""
    whole: list[tuple[int, str]] = []
    for node_id, text in rows:
        if len(text) <= LONG_CHARS:
            whole.append((node_id, text))
            continue
        for start, end in spans(text):
            piece = conn.execute(
                'INSERT INTO memory_pieces (node, start, "end") VALUES (?, ?, ?) RETURNING id', [node_id, start, end]
            ).fetchone()[0]
            whole.append((-piece, text[start:end]))
    dialect_of(conn).fts_insert(conn, "memory_fts", whole)


def reindex(conn: sqlite3.Connection, batch: int = 5_000) -> int:
    """Fill the empty BM25 index again from the graph: each live node whole, or by the pieces it has (a home
    whose rows were copied in with their ids, memory/engines/copy.py). How many rows went in."""
    dialect, added, after = dialect_of(conn), 0, 0
    while True:
        nodes = conn.execute(
            "SELECT id, text FROM memory_nodes WHERE deleted IS NULL AND id > ? ORDER BY id LIMIT ?", [after, batch]
        ).fetchall()
        if not nodes:
            return added
        first, after = nodes[0][0], nodes[-1][0]
        cut: dict[int, list[tuple[int, int, int]]] = {}
        sql = 'SELECT id, node, start, "end" FROM memory_pieces WHERE node BETWEEN ? AND ? ORDER BY node, start'
        for piece, node, start, end in conn.execute(sql, [first, after]).fetchall():
            cut.setdefault(node, []).append((piece, start, end))
        texts: list[tuple[int, str]] = []
        for node, text in nodes:
            texts += [(-piece, text[start:end]) for piece, start, end in cut[node]] if node in cut else [(node, text)]
        dialect.fts_insert(conn, "memory_fts", texts)
        added += len(texts)


def unindex_text(conn: sqlite3.Connection, node_id: int, text: str) -> None:
    """Take a node's `text` (as it was indexed) out of the BM25 index."""
    pieces = pieces_of(conn, node_id)
    delete = dialect_of(conn).fts_delete("memory_fts")
    if not pieces:
        conn.execute(delete, [node_id, text])
        return
    conn.executemany(delete, [(-piece, text[start:end]) for piece, start, end in pieces])
    conn.execute("DELETE FROM memory_pieces WHERE node = ?", [node_id])


def pieces_of(conn: sqlite3.Connection, node_id: int) -> list[tuple[int, int, int]]:
    """`(piece id, start, end)` of a node indexed in pieces, in order; empty for a node indexed whole."""
    sql = 'SELECT id, start, "end" FROM memory_pieces WHERE node = ? ORDER BY start'
    return [tuple(row) for row in conn.execute(sql, [node_id])]
