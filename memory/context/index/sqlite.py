"""The context store's full-text index on SQLite: FTS5 over the chunks, ranked by its own BM25.

`context_fts` (memory/context/schema.py) is an FTS5 table whose content is
`context_chunks`: a chunk goes in with its row id, and leaves by the
'delete' command, given the text it indexed. A search is one query:
`ORDER BY rank ... LIMIT` lets FTS5 sort the matches itself and cut the
snippet only of the rows returned, which keeps a search of ten million
tokens in milliseconds. Documents come first, each kind by BM25.
"""

from __future__ import annotations

from typing import Any

from loci.memory.context.loader import Chunk
from loci.memory.projects import in_project

__all__ = ["insert_chunks", "loaded", "matches", "reindex", "unindex_object"]


def insert_chunks(conn: Any, object_id: int, batch: list[Chunk]) -> None:
    """Store the chunks of one object, and index each."""
    for chunk in batch:
        cursor = conn.execute(
            "INSERT INTO context_chunks (object_id, seq, start_line, end_line, start_char,"
            " end_char, start_token, end_token, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                object_id,
                chunk.seq,
                chunk.start_line,
                chunk.end_line,
                chunk.start_char,
                chunk.end_char,
                chunk.start_token,
                chunk.end_token,
                chunk.text,
            ],
        )
        conn.execute("INSERT INTO context_fts (rowid, text) VALUES (?, ?)", [cursor.lastrowid, chunk.text])


def loaded(conn: Any, chunks: int) -> None:
    """Nothing: FTS5 keeps its own statistics."""


def reindex(conn: Any) -> int:
    """Build the index again from the stored chunks (FTS5's `rebuild`: the index reads its content table).
    How many chunks it holds."""
    conn.execute("INSERT INTO context_fts (context_fts) VALUES ('rebuild')")
    return conn.execute("SELECT count(*) FROM context_chunks").fetchone()[0]


def unindex_object(conn: Any, object_id: int) -> None:
    """Take the index rows of an object's chunks out (before the chunks themselves go)."""
    conn.execute(
        "INSERT INTO context_fts (context_fts, rowid, text)"
        " SELECT 'delete', id, text FROM context_chunks WHERE object_id = ?",
        [object_id],
    )


def matches(
    conn: Any,
    match: str,
    phrases: list[list[str]],
    refs: list[str] | None,
    limit: int,
    snippet: int,
    project: str | None,
) -> list[tuple[str, int, int, int, str, str, float]]:
    """`(kind, object number, first line, last line, text, snippet, BM25)` of the best chunks holding any of the
    quoted words of `match` in `project`'s complete objects (among `refs`), documents first, best first."""
    sql = (
        "SELECT o.kind, o.id, c.start_line, c.end_line, c.text,"
        f" snippet(context_fts, 0, '[', ']', ' … ', {snippet}), -context_fts.rank"
        " FROM context_fts JOIN context_chunks c ON c.id = context_fts.rowid"
        " JOIN context_objects o ON o.id = c.object_id"
        " WHERE context_fts MATCH ? AND o.complete = 1"
    )
    where, args = in_project(project, "o.project")
    sql += where
    params: list[Any] = [match, *args]
    if refs:
        sql += f" AND o.kind || ':' || o.id IN ({','.join('?' * len(refs))})"
        params += refs
    sql += " ORDER BY o.kind != 'doc', context_fts.rank LIMIT ?"
    params.append(limit)
    return [tuple(row) for row in conn.execute(sql, params).fetchall()]
