"""The memory graph's full-text index on SQLite: FTS5 with the porter tokenizer, ranked by BM25.

`memory_fts` (memory/graph/schema.py) holds each live node, or each piece of
a long one (memory/graph/pieces.py). A word's tokens are asked of FTS5
itself (`stems`, through a private in-memory FTS5 table with the same
tokenizer, so they always agree with the index), how many rows hold a token
of its vocabulary (`documents`, from `memory_vocab`, each count read once
while the index stays as it was), and the best rows of
the words of a query (`matches`: any of them, or every one), by BM25, and
the nodes whose row holds every word of a list, unranked (`holding_every`).

`world_scores` scores matches again as BM25 would on an index without some
rows (a run's records, memory/graph/run_records.py, which recall reads as an
index of their own): FTS5's bm25() counts every row in its statistics, so
each run whose task names a word lowers that word's weight in every turn's
score. The parts are FTS5's own: each row's tokens of a word
(`fts5vocab` instance rows), its length (`memory_fts_docsize`) and the
table's totals (`memory_fts_data`'s averages record), with the rows kept
apart taken out of the row count, the token total and each word's rows.
"""

from __future__ import annotations

import sqlite3

from loci.memory.context.fulltext import fts_literal, fts_phrase
from loci.memory.graph.pieces import NODE_OF_ROW
from loci.memory.params import in_chunks
from loci.memory.projects import ALL
from loci.memory.text.lines import okapi, okapi_idf

__all__ = [
    "PIECES_WIDEN",
    "STEM_TOKENIZER",
    "WIDEN",
    "documents",
    "holding_every",
    "matches",
    "stems",
    "world_scores",
]

STEM_TOKENIZER = "porter unicode61"
STEMS_KEPT = 10_000
_STEMS: dict[str, tuple[str, ...]] = {}  # word -> its tokens under STEM_TOKENIZER, for this process
COUNTS_KEPT = 10_000  # token counts kept for one connection
KEPT_CONNECTIONS = 16
# id(connection) -> (the connection, the index's structure record they were read with, token -> rows holding it)
_COUNTS: dict[int, tuple[sqlite3.Connection, bytes | None, dict[str, int]]] = {}
INSTANCES = "loci_fts_instance"  # each token's rows and offsets in `memory_fts`, a private vocabulary table
WIDEN = 2  # how many more matches a one-project search ranks before it joins
PIECES_WIDEN = 2  # how many more rows a search reads, so the pieces of one long node leave room for others


def stems(conn: sqlite3.Connection, terms: list[str]) -> dict[str, list[str]]:
    """Each term's tokens as the memory index holds them (porter stems; `x-ray` is two tokens).

    The terms new to this process go into a temporary FTS5 table private to
    this connection, and its vocabulary gives them back as FTS5 tokenized
    them. A word's tokens depend on the word and the tokenizer alone, so they
    are kept (`_STEMS`, up to `STEMS_KEPT` words): a recall of words seen
    before runs no statement for them."""
    # Read from the kept ones once, so another thread clearing them meanwhile changes nothing here.
    stems = {term: _STEMS.get(term) for term in dict.fromkeys(terms)}
    new = [term for term, tokens in stems.items() if tokens is None]
    if new:
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.loci_stem USING fts5(word, tokenize='{STEM_TOKENIZER}')")
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.loci_stem_vocab USING fts5vocab(temp, loci_stem, instance)"
        )
        conn.execute("DELETE FROM temp.loci_stem")
        conn.executemany("INSERT INTO temp.loci_stem (rowid, word) VALUES (?, ?)", list(enumerate(new)))
        found: dict[str, list[str]] = {term: [] for term in new}
        for doc, token in conn.execute("SELECT doc, term FROM temp.loci_stem_vocab ORDER BY doc, offset"):
            found[new[doc]].append(token)
        fresh = {term: tuple(tokens) for term, tokens in found.items()}
        stems.update(fresh)
        if len(_STEMS) + len(fresh) > STEMS_KEPT:
            _STEMS.clear()
        _STEMS.update(fresh)
    return {term: list(stems[term] or ()) for term in terms}


def documents(conn: sqlite3.Connection, tokens: list[str], cap: int) -> dict[str, int]:
    """How many rows of the index hold each of `tokens` (FTS5's vocabulary counts them all: `cap` is not needed).
    One lookup a token: the vocabulary table answers `term = ?` from its index, not `IN`; a count asked before
    on this connection, of the index as it still is, is not asked again (`_counts_kept`)."""
    kept = _counts_kept(conn)
    found = {}
    for token in tokens:
        count = kept.get(token) if kept is not None else None
        if count is None:
            row = conn.execute("SELECT doc FROM memory_vocab WHERE term = ?", [token]).fetchone()
            count = row[0] if row else 0
            if kept is not None and len(kept) < COUNTS_KEPT:
                kept[token] = count
        found[token] = count
    return found


def _counts_kept(conn: sqlite3.Connection) -> dict[str, int] | None:
    """The token counts this connection read from the index as it is now, to read from and add to; None inside a
    transaction, whose own writes may wait in FTS5's memory, unseen by the index's tables.

    Every write to `memory_fts` that commits, by any connection of any process, rewrites the index's structure
    record (FTS5 keeps it as row 10 of `memory_fts_data`, with a counter bumped on every write), and nothing else
    changes a count: so the counts stay valid while that record is the one they were read with. The home's
    `PRAGMA data_version` would not do: a recall writes its use counts, so the home changes between any two
    recalls while the index does not. The kept counts are the connection's own (compared by identity: an id can
    be reused once a connection is closed), for `KEPT_CONNECTIONS` connections at most."""
    if conn.in_transaction:
        return None
    row = conn.execute("SELECT block FROM memory_fts_data WHERE id = 10").fetchone()
    structure = row[0] if row else None
    entry = _COUNTS.get(id(conn))
    if entry is None or entry[0] is not conn or entry[1] != structure:
        if entry is None and len(_COUNTS) >= KEPT_CONNECTIONS:
            _COUNTS.clear()
        entry = (conn, structure, {})
        _COUNTS[id(conn)] = entry
    return entry[2]


def matches(
    conn: sqlite3.Connection,
    words: list[str],
    kinds: list[str],
    limit: int,
    project: str | None = ALL,
    *,
    every: bool = False,
    newest: bool = False,
) -> list[tuple[int, float]]:
    """`(node id, BM25 score)` of the best rows holding any of `words` (with `every`: all of them)."""
    match = " AND ".join(fts_literal([w]) for w in words) if every else fts_literal(words)
    return _ranked(conn, match, kinds, limit, project, newest) if match else []


def holding_every(
    conn: sqlite3.Connection, words: list[str], kind: str, project: str, limit: int
) -> list[tuple[int, str]]:
    """`(id, text)` of up to `limit` live, unnamed nodes of `kind` in `project` whose own row (not a piece's)
    holds every one of `words`, unranked: an FTS5 AND costs what its rarest word costs.

    The CROSS JOIN keeps FTS5 the outer loop: left to choose, SQLite walked the project's nodes by its
    index and asked FTS5 the whole AND once per node, a cost that grew with the project."""
    rows = conn.execute(
        "SELECT f.rowid, n.text FROM memory_fts f CROSS JOIN memory_nodes n ON n.id = f.rowid"
        " WHERE memory_fts MATCH ? AND n.kind = ? AND n.deleted IS NULL AND n.name IS NULL"
        " AND n.project = ? LIMIT ?",
        [" AND ".join(fts_phrase(w) for w in words), kind, project, limit],
    )
    return [(node_id, text) for node_id, text in rows]


def _ranked(
    conn: sqlite3.Connection,
    match: str,
    kinds: list[str],
    limit: int,
    project: str | None = ALL,
    newest: bool = False,
) -> list[tuple[int, float]]:
    """`(node id, BM25 score)` of the best matches in `project` (or of the newest, without ranking them all);
    higher is better. A node indexed in pieces (memory/graph/pieces.py) counts once, by its best piece.

    FTS5 ranks its own matches fastest, with no join; so for one project the
    best `WIDEN` times as many are ranked alone and the project's kept. Only
    when other projects crowd that page does the query join each match to its
    node (which costs a lookup per match: twice the time of a recall at
    100,000 nodes)."""
    if project is not ALL and not kinds:
        wide = _ranked(conn, match, [], limit * WIDEN, newest=newest)
        mine = _of_project(conn, [node_id for node_id, _ in wide], project)
        found = [(node_id, score) for node_id, score in wide if node_id in mine]
        if len(found) >= limit or len(wide) < limit * WIDEN:
            return found[:limit]
    # `rank` is bm25() as FTS5 computed it to sort: asking bm25() again would score every row returned twice.
    sql = f"SELECT {NODE_OF_ROW}, -rank FROM memory_fts f"
    params: list[object] = [match]
    if kinds or project is not ALL:
        sql += f" JOIN memory_nodes n ON n.id = ({NODE_OF_ROW}) WHERE memory_fts MATCH ?"
        if kinds:
            sql += f" AND n.kind IN ({','.join('?' * len(kinds))})"
            params += kinds
        if project is not ALL:
            sql += " AND n.project = ?"
            params.append(project)
    else:
        sql += " WHERE memory_fts MATCH ?"
    # `+rank`: SQLite sorts, keeping only the best LIMIT rows as they come, in FTS5's rowid order among equal
    # scores; ORDER BY rank would have FTS5 sort every match first (a quarter more time on 5,000 matches).
    sql += " ORDER BY f.rowid DESC LIMIT ?" if newest else " ORDER BY +rank LIMIT ?"
    params.append(limit * PIECES_WIDEN)
    best: dict[int, float] = {}
    for node_id, score in conn.execute(sql, params):
        if node_id is not None and node_id not in best:
            best[node_id] = score
    return list(best.items())[:limit]


def _of_project(conn: sqlite3.Connection, ids: list[int], project: str) -> set[int]:
    """The ids among `ids` of nodes in `project` (checked per row, as `_scoring_rows` does)."""
    found: set[int] = set()
    for chunk, marks in in_chunks(ids):
        sql = f"SELECT id, project FROM memory_nodes WHERE id IN ({marks})"
        found.update(node_id for node_id, theirs in conn.execute(sql, chunk) if theirs == project)
    return found


def world_scores(
    conn: sqlite3.Connection, words: list[str], found: list[tuple[int, float]], apart: str
) -> dict[int, float]:
    """The BM25 score of each node of `found` (nodes `matches(conn, words, ...)` returned) as FTS5's bm25() would
    give it on an index without the rows `apart` selects (an SQL query of row ids), best piece for a node in pieces;
    `{}` when no row is apart, or when a word is a phrase of several tokens (its positions are not read here)."""
    stemmed = stems(conn, words)
    tokens = [stemmed[word][0] for word in words if stemmed[word]]
    if not found or any(len(stemmed[word]) > 1 for word in words) or not tokens:
        return {}
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{INSTANCES} USING fts5vocab(main, memory_fts, instance)")
    apart_rows, apart_length, apart_hits = _apart_counts(conn, apart, tokens)
    if not apart_rows:
        return {}
    totals = conn.execute("SELECT block FROM memory_fts_data WHERE id = 1").fetchone()
    rows, length = _varints(totals[0])[:2] if totals else (0, 0)
    rows, length = rows - apart_rows, length - apart_length
    if rows <= 0:
        return {}
    node_of = {node_id: node_id for node_id, _ in found}
    for chunk, marks in in_chunks(list(node_of)):
        node_of.update(conn.execute(f"SELECT -id, node FROM memory_pieces WHERE node IN ({marks})", chunk).fetchall())
    sizes: dict[int, int] = {}
    for chunk, marks in in_chunks(list(node_of)):
        sql = f"SELECT id, sz FROM memory_fts_docsize WHERE id IN ({marks})"
        sizes.update((row, _varints(size)[0]) for row, size in conn.execute(sql, chunk))
    held = documents(conn, sorted(set(tokens)), 0)
    scores: dict[int, float] = {}
    average = length / rows
    for token in tokens:  # a word twice (two words of one stem) counts twice, as in FTS5's query
        hits = held[token] - apart_hits[token]
        idf = okapi_idf(rows, hits)
        for chunk, marks in in_chunks(list(sizes)):
            sql = f"SELECT doc, count(*) FROM temp.{INSTANCES} WHERE term = ? AND doc IN ({marks}) GROUP BY doc"
            for row, count in conn.execute(sql, [token, *chunk]):
                scores[row] = scores.get(row, 0.0) + okapi(idf, count, sizes[row], average)
    best: dict[int, float] = {}
    for row, score in scores.items():
        node_id = node_of[row]
        best[node_id] = max(best.get(node_id, 0.0), score)
    return best


def _apart_counts(conn: sqlite3.Connection, apart: str, tokens: list[str]) -> tuple[int, int, dict[str, int]]:
    """How many rows `apart` selects, their tokens in all, and how many of them hold each of `tokens`; kept with
    the token counts (`_counts_kept`: while the index stays as it was), since reading every run record's size
    costs a row each, and a home may hold thousands of runs. A run record is made, indexed and forgotten in one
    transaction with its row of the index, so the rows `apart` selects change only when the index does."""
    kept = _counts_kept(conn)
    kept = {} if kept is None else kept
    key = "\0" + apart  # no token starts with a NUL; the totals' keys end in one, a token's does not
    if (rows := kept.get(key + ":rows\0")) is None:
        rows, length = 0, 0
        for (size,) in conn.execute(f"SELECT sz FROM memory_fts_docsize WHERE id IN ({apart})"):
            rows, length = rows + 1, length + _varints(size)[0]
        kept[key + ":rows\0"], kept[key + ":length\0"] = rows, length
    hits: dict[str, int] = {}
    for token in tokens:
        if (count := kept.get(f"{key}:{token}")) is None:
            sql = f"SELECT count(DISTINCT doc) FROM temp.{INSTANCES} WHERE term = ? AND doc IN ({apart})"
            count = kept[f"{key}:{token}"] = conn.execute(sql, [token]).fetchone()[0]
        hits[token] = count
    return rows, kept[key + ":length\0"], hits


def _varints(blob: bytes) -> list[int]:
    """The SQLite varints FTS5 writes one after another (a row's size per column; the table's totals)."""
    values, value, read = [], 0, 0
    for byte in blob:
        read += 1
        if read == 9:
            values.append((value << 8) | byte)
            value, read = 0, 0
        elif byte & 0x80:
            value = (value << 7) | (byte & 0x7F)
        else:
            values.append((value << 7) | byte)
            value, read = 0, 0
    return values
