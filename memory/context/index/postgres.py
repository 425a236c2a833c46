"""The context store's full-text index on PostgreSQL: the words FTS5 sees, ranked by FTS5's BM25.

`context_fts` (memory/engines/postgres/schema/context.py) holds a row per
chunk: its words at their places as a `tsvector` (memory/context/index/words.py,
the words `unicode61` gives SQLite's FTS5) and its number of words, under a
GIN index; triggers keep the table's rows and words in `context_fts_count`,
and each word's postings in `context_postings` (a segment for each word of
the rows of one object that went in together: the rows, the word's count in
each, each row's length, and the object, its kind and project). A chunk goes
in with the batch it was loaded in, one statement for the chunks and one for
their index rows.

A search ranks as FTS5 ranks the same rows: a phrase's inverse document
frequency counts the rows of the whole table that hold it
(`log((N - n + 0.5) / (n + 0.5))`, never below a millionth), its frequency
in a row is its number of places there, and a row's length is its number of
words over the table's average (k1 1.2, b 0.75); a row's parts are added in
the query's order. Documents come first, each kind by that score; ties by
chunk. When every query word is one folded word (nearly every search),
`by_postings` reads only the postings: one word's segments, unnested, a scan
a word, joined by chunk; an object's project and kind filter its segments,
and the objects still loading (few, found by a partial index) are left out
by id, since `complete` changes when a load ends; only the chunks returned
are read. A common word is a few segments, where reading each matched
row's `tsvector` read nearly the whole table.
A query word that is a phrase of several words (`default_format` is
`default <-> format`) needs places: `by_places` finds the rows with `@@`
and counts, from each row's own `tsvector`, the places where the phrase's
words stand in order (`setweight` marks the query's words and `ts_filter`
keeps them). The two give the same scores to the last bit. The snippet is
FTS5's, cut in Python from the rows returned.
"""

from __future__ import annotations

from typing import Any

from loci.memory.context.index.words import snippet as cut_snippet
from loci.memory.context.index.words import tsvector_text
from loci.memory.context.loader import Chunk
from loci.memory.projects import ALL, in_project
from loci.memory.text.lines import K1, okapi_idf
from loci.memory.text.lines import OKAPI_B as B

__all__ = ["by_places", "by_postings", "insert_chunks", "loaded", "matches", "reindex", "unindex_object"]

_CHUNK_COLUMNS = {
    "object_id": "bigint",
    "seq": "integer",
    "start_line": "bigint",
    "end_line": "bigint",
    "start_char": "bigint",
    "end_char": "bigint",
    "start_token": "bigint",
    "end_token": "bigint",
    "text": "text",
}
_INDEX_COLUMNS = {"rowid": "bigint", "tsv": "tsvector", "len": "integer"}
# The table's average number of words a row (at least one), read once a search.
AVERAGE = "(SELECT greatest(words, 1)::float8 / greatest(n, 1) FROM context_fts_count)"


def insert_chunks(conn: Any, object_id: int, batch: list[Chunk]) -> None:
    """Store the chunks of one object and their index rows, a statement each."""
    if not batch:
        return
    rows = [
        (object_id, c.seq, c.start_line, c.end_line, c.start_char, c.end_char, c.start_token, c.end_token, c.text)
        for c in batch
    ]
    conn.dialect.insert_many(conn, "context_chunks", _CHUNK_COLUMNS, rows)
    vectors = [tsvector_text(chunk.text) for chunk in batch]
    conn.execute(
        "INSERT INTO context_fts (rowid, tsv, len) SELECT c.id, CAST(t.tsv AS tsvector), t.len"
        " FROM unnest(CAST(? AS integer[]), CAST(? AS text[]), CAST(? AS integer[])) AS t(seq, tsv, len)"
        " JOIN context_chunks c ON c.object_id = ? AND c.seq = t.seq",
        [[c.seq for c in batch], [v[0] for v in vectors], [v[1] for v in vectors], object_id],
    )
    conn.grew("context_fts", len(batch))


def loaded(conn: Any, chunks: int) -> None:
    """Note an object of `chunks` chunks, loaded a batch at a time, as grown in the transaction that completes it:
    the store then refreshes the planner's statistics of a table that grew by a large share (a batch alone is
    too small to), so the searches and reads that follow a big load are planned for the table it left."""
    for table in ("context_chunks", "context_fts"):
        conn.grew(table, chunks)


def reindex(conn: Any, batch: int = 2_000) -> int:
    """Fill the empty index from the stored chunks (a home whose rows were copied in with their ids,
    memory/engines/copy.py), a batch of chunks a statement. How many rows went in."""
    added, after = 0, 0
    while True:
        chunks = conn.execute(
            "SELECT id, text FROM context_chunks WHERE id > ? ORDER BY id LIMIT ?", [after, batch]
        ).fetchall()
        if not chunks:
            return added
        after = chunks[-1][0]
        rows = [(chunk_id, *tsvector_text(text)) for chunk_id, text in chunks]
        conn.dialect.insert_many(conn, "context_fts", _INDEX_COLUMNS, rows)
        added += len(rows)


def unindex_object(conn: Any, object_id: int) -> None:
    """Take the index rows of an object's chunks out (before the chunks themselves go)."""
    conn.execute(
        "DELETE FROM context_fts WHERE rowid IN (SELECT id FROM context_chunks WHERE object_id = ?)", [object_id]
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
    """`(kind, object number, first line, last line, text, snippet, BM25)` of the best chunks holding any of
    `phrases` (folded words) in `project`'s complete objects (among `refs`), documents first, best first."""
    phrases = [list(p) for p in dict.fromkeys(tuple(p) for p in phrases if p)]
    if not phrases:
        return []
    # Planned for its parameters (a generic plan scored a frequent word's matches row by row), and never
    # compiled: once the tables are analyzed a search's estimated cost passes JIT's threshold, and compiling
    # took far longer than the query.
    conn.execute("SELECT set_config('plan_cache_mode', 'force_custom_plan', true), set_config('jit', 'off', true)")
    if all(len(phrase) == 1 for phrase in phrases):
        rows = by_postings(conn, [phrase[0] for phrase in phrases], refs, limit, project)
    else:  # a phrase needs the places of its words: the rows' own tsvectors
        rows = by_places(conn, phrases, refs, limit, project)
    return [
        (kind, oid, first, last, text, cut_snippet(text, phrases, snippet), float(score))
        for kind, oid, first, last, text, score in rows
    ]


def by_postings(
    conn: Any, words: list[str], refs: list[str] | None, limit: int, project: str | None
) -> list[tuple[str, int, int, int, str, float]]:
    """`(kind, object number, first line, last line, text, BM25)` of the best chunks holding any of `words`, each
    one word, read from `context_postings` alone: a word's segments unnested (a scan a word, the segments
    filtered by project and refs, the objects still loading left out), the scans joined by chunk, a chunk's
    score its words' parts added in the query's order (0 for a word it lacks), as `by_places` adds them. Only
    the chunks returned are read."""
    counts = ", ".join(
        "(SELECT coalesce(sum(cardinality(rowids)), 0) FROM context_postings WHERE term = ?)" for _ in words
    )
    total, *hits = conn.execute(f"SELECT n, {counts} FROM context_fts_count", words).fetchone()
    params: list[Any] = []

    def mark(value: Any) -> str:
        params.append(value)
        return "?"

    scans = []
    for word, held in zip(words, hits, strict=True):
        part = (
            f"{mark(_bm25_idf(total, held))} * u.n * {mark(K1 + 1)} / (u.n + {mark(K1)} * (1 - {mark(B)}"
            f" + {mark(B)} * u.len / {AVERAGE}))"
        )
        where = f" WHERE p.term = {mark(word)} AND p.oid NOT IN (SELECT id FROM context_objects WHERE complete <> 1)"
        if project is not ALL:
            where += f" AND p.project = {mark(project)}"
        if refs:
            where += f" AND p.kind || ':' || p.oid IN ({','.join(mark(ref) for ref in refs)})"
        scans.append(
            f"(SELECT u.rowid, p.kind, p.oid, {part} AS s FROM context_postings p"
            f" CROSS JOIN LATERAL unnest(p.rowids, p.ns, p.lens) AS u(rowid, n, len){where})"
        )
    rows = scans[0] + " t1" + "".join(f" FULL JOIN {scan} t{i} USING (rowid)" for i, scan in enumerate(scans[1:], 2))
    kind = "coalesce(" + ", ".join(f"t{i}.kind" for i in range(1, len(scans) + 1)) + ")"
    oid = "coalesce(" + ", ".join(f"t{i}.oid" for i in range(1, len(scans) + 1)) + ")"
    score = " + ".join(f"coalesce(t{i}.s, 0)" for i in range(1, len(scans) + 1))
    sql = (
        f"SELECT s.kind, s.oid, c.start_line, c.end_line, c.text, s.score FROM (SELECT * FROM (SELECT rowid,"
        f" {kind} AS kind, {oid} AS oid, {score} AS score FROM {rows}) u"
        f" ORDER BY u.kind != 'doc', u.score DESC, u.rowid LIMIT {mark(limit)}) s"
        " JOIN context_chunks c ON c.id = s.rowid ORDER BY s.kind != 'doc', s.score DESC, s.rowid"
    )
    return conn.execute(sql, params).fetchall()


def by_places(
    conn: Any, phrases: list[list[str]], refs: list[str] | None, limit: int, project: str | None
) -> list[tuple[str, int, int, int, str, float]]:
    """`(kind, object number, first line, last line, text, BM25)` of the best chunks holding any of `phrases`,
    found by the GIN index, each matched row's words counted from its own `tsvector`; a row's parts added
    in the query's order."""
    queries = [" <-> ".join(_lexeme(word) for word in phrase) for phrase in phrases]
    idf = _idf(conn, queries)
    where, args = in_project(project, "o.project")
    if refs:
        where += f" AND o.kind || ':' || o.id IN ({','.join('?' * len(refs))})"
        args += refs
    parts = [
        (term, word, offset, len(phrase))
        for term, phrase in enumerate(phrases, 1)
        for offset, word in enumerate(phrase)
    ]
    sql = (
        "WITH m AS MATERIALIZED (SELECT f.rowid, f.tsv, f.len, o.kind, o.id AS oid FROM context_fts f"
        " JOIN context_chunks c ON c.id = f.rowid JOIN context_objects o ON o.id = c.object_id"
        f" WHERE f.tsv @@ CAST(? AS tsquery) AND o.complete = 1{where}),"
        " p AS (SELECT * FROM unnest(CAST(? AS integer[]), CAST(? AS text[]), CAST(? AS integer[]),"
        " CAST(? AS integer[])) AS p(term, word, off, size)),"
        " x AS (SELECT m.rowid, x.lexeme, x.positions FROM m"
        " CROSS JOIN LATERAL unnest(ts_filter(setweight(m.tsv, 'A', CAST(? AS text[])), '{a}')) AS x),"
        # a word's frequency is its number of places; a phrase's, the places where its words stand in order
        " t AS (SELECT x.rowid, p.term, cardinality(x.positions) AS tf FROM x JOIN p ON p.word = x.lexeme"
        " WHERE p.size = 1 UNION ALL SELECT h.rowid, h.term, count(*) FROM (SELECT x.rowid, p.term FROM x"
        " JOIN p ON p.word = x.lexeme AND p.size > 1 CROSS JOIN LATERAL unnest(x.positions) AS y(at)"
        " GROUP BY x.rowid, p.term, y.at - p.off HAVING count(*) = max(p.size)) AS h GROUP BY h.rowid, h.term),"
        " s AS (SELECT m.rowid, m.kind, m.oid, sum((CAST(? AS float8[]))[t.term] * t.tf * ? / (t.tf + ? * (1 - ?"
        f" + ? * m.len / {AVERAGE})) ORDER BY t.term) AS score"
        " FROM t JOIN m ON m.rowid = t.rowid GROUP BY m.rowid, m.kind, m.oid"
        " ORDER BY m.kind != 'doc', score DESC, m.rowid LIMIT ?)"
        " SELECT s.kind, s.oid, c.start_line, c.end_line, c.text, s.score"
        " FROM s JOIN context_chunks c ON c.id = s.rowid"
        " ORDER BY s.kind != 'doc', s.score DESC, s.rowid"
    )
    words = sorted({word for phrase in phrases for word in phrase})
    params = [
        " | ".join(f"({q})" for q in queries),
        *args,
        *(list(column) for column in zip(*parts, strict=True)),
        words,
        idf,
        K1 + 1,
        K1,
        B,
        B,
        limit,
    ]
    return conn.execute(sql, params).fetchall()


def _idf(conn: Any, queries: list[str]) -> list[float]:
    """Each phrase's inverse document frequency over the whole index, as FTS5 computes it."""
    counts = ", ".join("(SELECT count(*) FROM context_fts WHERE tsv @@ CAST(? AS tsquery))" for _ in queries)
    row = conn.execute(f"SELECT n, {counts} FROM context_fts_count", queries).fetchone()
    return [_bm25_idf(row[0], hits) for hits in row[1:]]


def _bm25_idf(total: int, hits: int) -> float:
    """The inverse document frequency of a phrase `hits` of `total` rows hold, as FTS5 computes it."""
    return okapi_idf(total, hits)


def _lexeme(word: str) -> str:
    """`word` quoted as one tsquery lexeme, taken as it is."""
    return "'" + word.replace("\\", "\\\\").replace("'", "''") + "'"
