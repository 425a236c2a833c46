"""Query terms for recall: which words of a question are worth searching for, and how common each is.

A question is split into words by `memory.context.fulltext.query_words` (the one
splitter that context search uses too), case-folded, and stripped of the
words that say nothing about what to find: function words and the frame of a
question ("what did ... do", "would ... be likely to"). What is left is
searched literally, OR-ed, and ranked by BM25.

The memory index stems with FTS5's `porter` tokenizer ("plays", "played" and
"playing" are one term), so how common a query word is must be read under its
stem. `term_stems` asks FTS5 itself, through a private in-memory FTS5 table
with the same tokenizer, so the stems always agree with the index. Terms so
common that scoring them would cost more than they tell are left out
(`selective_terms`), which keeps a recall's cost bounded by a budget of
documents, not by the size of the graph.

A question about a conversation also names the conversation itself: "can
you list the order in which I brought up different aspects of X throughout
our conversations", "a comprehensive summary of Y across our sessions".
Those words (`FRAME_WORDS`) say how to answer, not what to find, and they
match best the long replies that talk about the conversation ("as we
discussed in this session..."), so ranking leaves them out (`searched_terms`)
unless nothing else is left. Plain BM25, the baseline recall is measured
against, keeps them. On BEAM dev, whose questions are framed so, Loci
recall@1/@5/@10/@20 0.212/0.474/0.548/0.588 -> 0.230/0.482/0.562/0.596, and
its no-graph ablation gains alike; LoCoMo dev (questions about what people
did) is unchanged at every k. Request verbs ("walk me through", "tell",
"show", "give") were left in: dropping them cost LoCoMo dev recall@10 0.004,
where they are what a question asks about ("the show she went to").

A question also says whose words it asks for. Most ask for what the person
said ("what did I mention"), which recall weighs above an assistant's
elaborations (`Weights.elaboration`); one that asks what the assistant said
("how did you recommend...", "what we discussed") is told by
`asks_for_replies`, and then both sides count alike. A request to the
assistant ("can you list...", "would you suggest...") is not such a question.
"""

from __future__ import annotations

import re
import sqlite3

from memory.context.fulltext import STOP_WORDS, query_words

__all__ = [
    "FRAME_WORDS",
    "MAX_TERMS",
    "STOP_WORDS",
    "asks_for_replies",
    "query_terms",
    "searched_terms",
    "selective_terms",
    "term_stems",
]

MAX_TERMS = 32
STEM_TOKENIZER = "porter unicode61"
STEMS_KEPT = 10_000
_STEMS: dict[str, tuple[str, ...]] = {}  # word -> its tokens under STEM_TOKENIZER, for this process
# The words a question uses to frame a question about the conversation itself, not what to find in it.
FRAME_WORDS = frozenset(
    (
        "conversation conversations discussion discussions session sessions chat chats"
        " mention mentioned mentions brought throughout across summary summarize summarise comprehensive"
        " list order different aspects"
    ).split()
)


_REPLIES = re.compile(
    r"\b(?:did|have|had) you\b"
    r"|\byou (?:recommended|suggested|said|mentioned|proposed|advised|explained|told|described|showed|gave)\b"
    r"|\bwe(?:'ve| have)? (?:discussed|covered|talked)\b|\bour (?:discussions|chats)\b",
    re.IGNORECASE,
)


def asks_for_replies(query: str) -> bool:
    """Whether a question asks for what the assistant said (or what both sides did), not only the person."""
    return bool(_REPLIES.search(query))


def query_terms(query: str) -> list[str]:
    """The query's distinct informative words, case-folded; stop words dropped unless nothing else is left."""
    words = list(dict.fromkeys(w.casefold() for w in query_words(query)))
    return ([w for w in words if w not in STOP_WORDS] or words)[:MAX_TERMS]


def searched_terms(terms: list[str]) -> list[str]:
    """The query terms ranking searches for: without the frame of a question about the conversation
    (`FRAME_WORDS`), unless nothing else is left."""
    return [t for t in terms if t not in FRAME_WORDS] or terms


def term_stems(conn: sqlite3.Connection, terms: list[str]) -> dict[str, list[str]]:
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


def selective_terms(conn: sqlite3.Connection, terms: list[str], budget: int) -> tuple[list[str], bool]:
    """The rarest terms whose documents add up to at most `budget` (always at least one),
    and whether even those are over the budget.

    A term found in a large share of the nodes adds little to BM25 but costs a
    score for every node it is in; leaving it out keeps a recall's cost bounded
    by the budget, not by the size of the graph."""
    counted = []
    for term, tokens in term_stems(conn, terms).items():
        docs = [_documents(conn, token) for token in tokens]
        counted.append((min(docs, default=0), term))
    counted.sort()
    kept, total = [], 0
    for docs, term in counted:
        if kept and total + docs > budget:
            break
        kept.append(term)
        total += docs
    return kept, total > budget


def _documents(conn: sqlite3.Connection, token: str) -> int:
    row = conn.execute("SELECT doc FROM memory_vocab WHERE term = ?", [token]).fetchone()
    return row[0] if row else 0
