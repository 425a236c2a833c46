"""The memory graph's full-text index on PostgreSQL: each row's postings under one B-tree, its `tsvector` under GIN.

`memory_fts` (memory/engines/postgres/schema/graph.py) has the rows SQLite's
FTS5 table has, keyed the same way (a node's id, or minus its piece's), with
`tsv`, the text as the `english` configuration parses it (Snowball stems,
where SQLite's tokenizer has Porter's). A word's tokens are asked of the
same configuration (`stems`), so they agree with the index; `documents`
reads how many rows hold a token from `memory_vocab`, which triggers keep
(as FTS5's vocabulary table does on SQLite), and they keep the number of
rows too (`memory_fts_count`, with their lengths added up), so BM25's IDF
is FTS5's, exactly. `matches` ranks the rows holding any (or every) word by
BM25 in one query: each matched lexeme's inverse document frequency (from
the vocabulary and the table's row count) times its saturated count in the
row, normalized by the row's length (its distinct lexemes) over the whole
table's average, as FTS5 normalizes. When each word is one lexeme, the
query reads only `memory_postings` (a row per lexeme of each row, with its
count, the row's length, kind and project, kept by the same triggers):
one index-only scan a lexeme, in row order, the scans joined by row. A word
of several tokens (`x-ray`) is a phrase (`<->`) and needs positions: then
the GIN index finds the rows, each lexeme of the query is tested with `@@`
and its count read from the row's `repeats` (the lexemes it holds more than
once; NULL for most rows), else 1. Both add the parts in lexeme order, so
two rows alike score exactly alike and the two queries give the same
scores. `ts_rank_cd`, PostgreSQL's own ranking, has no inverse document
frequency, and ranked far below SQLite's BM25 on the same questions. A node's
project and kind are filtered in the query itself, by the copy of both each
row carries (the dialect's `fts_insert` gives them): reading each match's
node instead cost a lookup per match, or a hash of every node of the
graph. `holding_every` finds
the nodes whose own row holds every word of a list, unranked. `world_scores`
scores matches again as `matches` would on an index without some rows (a
run's records, memory/graph/run_records.py): the same parts, read from the
postings and counts, with those rows taken out of the row count, the length
total and each lexeme's rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loci.memory.graph.pieces import NODE_OF_ROW
from loci.memory.params import in_chunks
from loci.memory.projects import ALL
from loci.memory.text.lines import K1, OKAPI_B, okapi, okapi_idf

__all__ = ["documents", "holding_every", "matches", "stems", "world_scores"]

PIECES_WIDEN = 2  # how many more rows a search reads, so the pieces of one long node leave room for others
STEMS_KEPT = 10_000
_STEMS: dict[str, tuple[str, ...]] = {}  # word -> its lexemes under the `english` configuration, for this process
B = OKAPI_B  # FTS5 bm25() defaults (memory/text/lines.py), written into the SQL below
# The average row's length (at least one), read once a search.
AVERAGE = "(SELECT CASE WHEN n > 0 THEN greatest(1, CAST(len AS float8) / n) ELSE 1 END FROM memory_fts_count)"


def stems(conn: Any, terms: list[str]) -> dict[str, list[str]]:
    """Each term's tokens as the index holds them, in the order they appear; a stop word has none. A word's
    tokens depend on the word and the configuration alone, so they are kept (`_STEMS`, up to `STEMS_KEPT`)."""
    known = {term: _STEMS.get(term) for term in dict.fromkeys(terms)}
    new = [term for term, tokens in known.items() if tokens is None]
    if new:
        found: dict[str, list[str]] = {term: [] for term in new}
        sql = (
            "SELECT t.i, x.lexeme FROM unnest(CAST(? AS text[])) WITH ORDINALITY AS t(w, i),"
            " unnest(to_tsvector('english', t.w)) AS x ORDER BY t.i, x.positions[1]"
        )
        for index, lexeme in conn.execute(sql, [new]):
            found[new[index - 1]].append(lexeme)
        fresh = {term: tuple(tokens) for term, tokens in found.items()}
        known.update(fresh)
        if len(_STEMS) + len(fresh) > STEMS_KEPT:
            _STEMS.clear()
        _STEMS.update(fresh)
    return {term: list(known[term] or ()) for term in terms}


def documents(conn: Any, tokens: list[str], cap: int) -> dict[str, int]:
    """How many rows of the index hold each of `tokens`, in one statement (the vocabulary counts them all: `cap`
    is not needed)."""
    found = dict.fromkeys(tokens, 0)
    found.update(conn.execute("SELECT term, doc FROM memory_vocab WHERE term = ANY(CAST(? AS text[]))", [tokens]))
    return found


def matches(
    conn: Any,
    words: list[str],
    kinds: list[str],
    limit: int,
    project: str | None = ALL,
    *,
    every: bool = False,
    newest: bool = False,
) -> list[tuple[int, float]]:
    """`(node id, BM25 score)` of the best rows holding any of `words` (with `every`: all of them), higher better;
    a node indexed in pieces counts once, by its best piece."""
    tokens = stems(conn, words)
    if not any(tokens.values()):
        return []
    params: list[Any] = []

    def mark(value: Any) -> str:
        params.append(value)
        return f"?{len(params)}"

    if any(len(found) > 1 for found in tokens.values()):  # a phrase needs the positions: the rows' own tsvector
        sql = _phrase_sql(tokens, kinds, project, limit, mark, every=every, newest=newest)
    else:
        sql = _postings_sql(
            sorted({found[0] for found in tokens.values() if found}),
            kinds,
            project,
            limit,
            mark,
            every=every,
            newest=newest,
        )
    best: dict[int, float] = {}
    for node_id, score in conn.execute(sql, params):
        if node_id is not None and node_id not in best:
            best[node_id] = float(score)
    return list(best.items())[:limit]


def _postings_sql(
    lexemes: list[str],
    kinds: list[str],
    project: str | None,
    limit: int,
    mark: Callable[[Any], str],
    *,
    every: bool,
    newest: bool,
) -> str:
    """The search when each word is one lexeme: each lexeme's postings read from `memory_postings`' key alone,
    one scan a lexeme, joined by row (a full join: any lexeme; an inner join: every one).

    Each scan comes in row order, so the joins merge or hash without grouping, and the newest rows holding
    every lexeme are found by reading the scans backwards until the limit. A row's score adds its lexemes'
    parts in lexeme order, 0 for a lexeme it lacks: the same sum, to the last bit, as the phrase search's."""
    d = f"({mark(K1 * (1 - B))} + {mark(K1 * B)} / {AVERAGE} * p.len)"
    saturation = mark(K1 + 1)
    filters = _filters("p", kinds, project, mark)
    scans = []
    for lexeme in lexemes:
        term = mark(lexeme)
        part = f"{_idf(term)} * p.n * {saturation} / (p.n + {d})"
        scans.append(f"(SELECT p.rowid, {part} AS s FROM memory_postings p WHERE p.term = {term}{filters})")
    join = " JOIN " if every else " FULL JOIN "
    rows = scans[0] + " t1" + "".join(f"{join}{scan} t{i} USING (rowid)" for i, scan in enumerate(scans[1:], 2))
    score = " + ".join(f"coalesce(t{i}.s, 0)" for i in range(1, len(scans) + 1))
    order = "f.rowid DESC" if newest else "f.score DESC, f.rowid"
    return (
        f"SELECT {NODE_OF_ROW}, f.score FROM (SELECT rowid, {score} AS score FROM {rows}) f"
        f" ORDER BY {order} LIMIT {mark(limit * PIECES_WIDEN)}"
    )


def _phrase_sql(
    tokens: dict[str, list[str]],
    kinds: list[str],
    project: str | None,
    limit: int,
    mark: Callable[[Any], str],
    *,
    every: bool,
    newest: bool,
) -> str:
    """The search when a word is a phrase of lexemes: the GIN index finds the rows, each row's own `tsvector`
    and `repeats` score it."""
    lexemes = sorted({token for found in tokens.values() for token in found})
    where = f" WHERE f.tsv @@ CAST({mark(_query(tokens, every))} AS tsquery){_filters('f', kinds, project, mark)}"
    if newest:  # the newest rows holding the words, scored without ranking every match
        where += f" ORDER BY f.rowid DESC LIMIT {mark(limit * PIECES_WIDEN)}"
    rows = (
        f"SELECT f.rowid, f.tsv, f.repeats, {mark(K1 * (1 - B))} + {mark(K1 * B)} / {AVERAGE} * length(f.tsv) AS d"
        f" FROM memory_fts f{where}"
    )
    saturation = mark(K1 + 1)
    # Every matched row holds every lexeme when the query asks for all its words, or has one word.
    held = every or sum(1 for found in tokens.values() if found) == 1
    score = " + ".join(
        _term_score(None if held else mark(_lexeme(lexeme)), mark(lexeme), saturation) for lexeme in lexemes
    )
    order = "f.rowid DESC" if newest else "f.score DESC, f.rowid"
    return (
        f"SELECT {NODE_OF_ROW}, f.score FROM (SELECT f.rowid, {score} AS score FROM ({rows}) f) f"
        f" ORDER BY {order} LIMIT {mark(limit * PIECES_WIDEN)}"
    )


def holding_every(conn: Any, words: list[str], kind: str, project: str, limit: int) -> list[tuple[int, str]]:
    """`(id, text)` of up to `limit` live, unnamed nodes of `kind` in `project` whose own row (not a piece's)
    holds every one of `words`, unranked (the GIN index finds them; the row's copy of kind and project filters)."""
    query = _query(stems(conn, words), every=True)
    if not query:
        return []
    rows = conn.execute(
        "SELECT f.rowid, n.text FROM memory_fts f JOIN memory_nodes n ON n.id = f.rowid"
        " WHERE f.tsv @@ CAST(? AS tsquery) AND f.kind = ? AND f.project = ? AND n.deleted IS NULL"
        " AND n.name IS NULL LIMIT ?",
        [query, kind, project, limit],
    )
    return [(node_id, text) for node_id, text in rows]


def _filters(alias: str, kinds: list[str], project: str | None, mark: Callable[[Any], str]) -> str:
    """The conditions that keep a search to `kinds` and `project`, read from the copy of both each row of
    `alias` carries (` AND …`, or nothing)."""
    held = f" AND {alias}.kind IN ({','.join(mark(kind) for kind in kinds)})" if kinds else ""
    return held + (f" AND {alias}.project = {mark(project)}" if project is not ALL else "")


def _term_score(query: str | None, lexeme: str, saturation: str) -> str:
    """One lexeme's part of a row's BM25 score (0 when the row lacks it, which `query` tests; None: every matched
    row holds it): its inverse document frequency as FTS5
    computes it (from the vocabulary and the row count; never below a millionth) times its count saturated and
    normalized by the row's length (`d`, which holds k1 and b); the count is 1 unless the row repeats it."""
    idf = _idf(lexeme)
    count = f"CASE WHEN f.repeats IS NULL THEN 1 ELSE coalesce(CAST(f.repeats ->> {lexeme} AS float8), 1) END"
    part = f"{idf} * {count} * {saturation} / ({count} + f.d)"
    return part if query is None else f"CASE WHEN f.tsv @@ CAST({query} AS tsquery) THEN {part} ELSE 0 END"


def _idf(lexeme: str) -> str:
    """A lexeme's inverse document frequency as FTS5 computes it, from the vocabulary and the row count (never
    below a millionth): a subquery of no row, so it is computed once a statement."""
    docs = f"coalesce((SELECT doc FROM memory_vocab WHERE term = {lexeme}), 0)"
    return (
        f"(SELECT greatest(CAST(1e-6 AS float8), ln((CAST(n - {docs} AS float8) + 0.5) / (CAST({docs} AS float8)"
        " + 0.5))) FROM memory_fts_count)"
    )


def _query(tokens: dict[str, list[str]], every: bool) -> str:
    """The tsquery text: each word's tokens as a phrase, joined by `|` (any word) or `&` (every word)."""
    phrases = [" <-> ".join(_lexeme(t) for t in found) for found in tokens.values() if found]
    return (" & " if every else " | ").join(f"({p})" for p in phrases)


def _lexeme(token: str) -> str:
    """`token` quoted as one tsquery lexeme, taken as it is (no second stemming)."""
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def world_scores(conn: Any, words: list[str], found: list[tuple[int, float]], apart: str) -> dict[int, float]:
    """The BM25 score of each node of `found` (nodes `matches(conn, words, ...)` returned) as `matches` would give it
    on an index without the rows `apart` selects (an SQL query of row ids): those rows taken out of the row count,
    the length total and each lexeme's rows; best piece for a node in pieces. `{}` when no row is apart, or when a
    word is a phrase of several tokens (as on SQLite, memory/graph/fts/sqlite.py)."""
    tokens = stems(conn, words)
    lexemes = sorted({found_tokens[0] for found_tokens in tokens.values() if found_tokens})
    if not found or not lexemes or any(len(found_tokens) > 1 for found_tokens in tokens.values()):
        return {}
    apart_rows, apart_length = conn.execute(
        f"SELECT count(*), coalesce(sum(length(tsv)), 0) FROM memory_fts WHERE rowid IN ({apart})"
    ).fetchone()
    if not apart_rows:
        return {}
    rows, length = conn.execute("SELECT n, len FROM memory_fts_count").fetchone()
    rows, length = rows - apart_rows, length - apart_length
    if rows <= 0:
        return {}
    average = max(1.0, float(length) / rows)
    node_of = {node_id: node_id for node_id, _ in found}
    for chunk, marks in in_chunks(list(node_of)):
        node_of.update(conn.execute(f"SELECT -id, node FROM memory_pieces WHERE node IN ({marks})", chunk).fetchall())
    scores: dict[int, float] = {}
    for lexeme in lexemes:  # in lexeme order, as `matches` adds the parts
        held = conn.execute("SELECT coalesce((SELECT doc FROM memory_vocab WHERE term = ?), 0)", [lexeme]).fetchone()
        gone = conn.execute(f"SELECT count(*) FROM memory_postings WHERE term = ? AND rowid IN ({apart})", [lexeme])
        docs = held[0] - gone.fetchone()[0]
        idf = okapi_idf(rows, docs)
        for chunk, marks in in_chunks(list(node_of)):
            sql = f"SELECT rowid, n, len FROM memory_postings WHERE term = ? AND rowid IN ({marks})"
            for row, count, size in conn.execute(sql, [lexeme, *chunk]):
                scores[row] = scores.get(row, 0.0) + okapi(idf, count, size, average)
    best: dict[int, float] = {}
    for row, score in scores.items():
        best[node_of[row]] = max(best.get(node_of[row], 0.0), score)
    return best
