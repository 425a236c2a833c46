"""Query terms for recall: which words of a question are worth searching for, and how common each is.

A question is split into words by `memory.context.fulltext.query_words` (the one
splitter that context search uses too), case-folded, and stripped of the
words that say nothing about what to find: function words and the frame of a
question ("what did ... do", "would ... be likely to"). What is left is
searched literally, OR-ed, and ranked by BM25.

The memory index stems ("plays", "played" and "playing" are one term), so how
common a query word is must be read under its stem: the index of the home's
engine says both (memory/graph/fts/: FTS5 on SQLite, `tsvector` on
PostgreSQL). Terms so
common that scoring them would cost more than they tell are left out
(`selective_terms`), which keeps a recall's cost bounded by a budget of
documents, not by the size of the graph.

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
from memory.graph.fts.index import text_index

__all__ = ["MAX_TERMS", "STOP_WORDS", "asks_for_replies", "query_terms", "selective_terms"]

MAX_TERMS = 32


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


def selective_terms(conn: sqlite3.Connection, terms: list[str], budget: int) -> tuple[list[str], bool]:
    """The rarest terms whose documents add up to at most `budget` (always at least one),
    and whether even those are over the budget.

    A term found in a large share of the nodes adds little to BM25 but costs a
    score for every node it is in; leaving it out keeps a recall's cost bounded
    by the budget, not by the size of the graph."""
    index = text_index(conn)
    counted = []
    for term, tokens in index.stems(conn, terms).items():
        docs = [index.documents(conn, token, budget) for token in tokens]
        counted.append((min(docs, default=0), term))
    counted.sort()
    kept, total = [], 0
    for docs, term in counted:
        if kept and total + docs > budget:
            break
        kept.append(term)
        total += docs
    return kept, total > budget
