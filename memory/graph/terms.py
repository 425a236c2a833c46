"""Query terms for recall: which words of a question are worth searching for, and how common each is.

A question is split into words by `memory.text.tokens.query_words` (the one
splitter of queries that context search uses too), case-folded, and stripped of the
words that say nothing about what to find: function words and the frame of a
question ("what did ... do", "would ... be likely to"). What is left is
searched literally, OR-ed, and ranked by BM25, beside the kinds WordNet lists
for a noun compound the question names ("what martial arts has John done?"
also searches taekwondo and judo: `memory/text/wordnet.py`).

The memory index stems ("plays", "played" and "playing" are one term), so how
common a query word is must be read under its stem: the index of the home's
engine says both (memory/graph/fts/: FTS5 on SQLite, `tsvector` on
PostgreSQL). Terms so
common that scoring them would cost more than they tell are left out
(`selective_terms`), which keeps a recall's cost bounded by a budget of
documents, not by the size of the graph.

A question about a conversation also frames itself in words about the
conversation: "can you list the order in which I brought up different
aspects of X throughout our conversations", "a comprehensive summary of Y
across my sessions", "what did I mention". Those phrases (`_FRAME`) say how
to answer, not what to find, and they match best the long replies that talk
about the conversation ("in our sessions we covered..."), so recall searches
the question without them (`searched_terms`; what they frame stays: "across
my weather app conversations" keeps "weather app"), unless nothing else is
left. They are phrases, not words: "the order in which" is a frame, "what did
Gina order" is not, nor is "session management". Plain BM25, the baseline
recall is measured against, searches every word. Single words of a frame
(list, order, summary, session...) are kept, since a question may ask about
them, and so are request verbs ("tell", "show", "give": "the show she went
to"). What leaving the frames out gains, and what the alternatives cost:
docs/benchmarks.md, "Figures behind the code's choices".

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

from loci.memory.context.fulltext import STOP_WORDS
from loci.memory.graph.fts.index import text_index
from loci.memory.text.tokens import query_words
from loci.memory.text.wordnet import narrower

__all__ = ["MAX_TERMS", "STOP_WORDS", "asks_for_replies", "query_terms", "searched_terms", "selective_terms"]

MAX_TERMS = 32
_TALK = r"(?:conversations?|discussions?|sessions?|chats?|exchanges|requests|questions)"
# The phrases that frame a question about the conversation itself; what they frame (`keep`) stays.
_FRAME = re.compile(
    r"\b(?:throughout|across|during|over|in)\s+(?:all\s+)?(?:of\s+)?(?:our|my)\s+"
    rf"(?P<keep>(?:[\w'-]+\s+){{0,3}}?){_TALK}\b"
    r"|\b(?:the\s+)?order\s+in\s+which\b|\bin\s+(?:chronological\s+)?order\b"
    r"|\bbrought\s+up\b|\bmention(?:ed|s)?\b|\b(?:can|could|would)\s+you\s+(?:please\s+)?list\b"
    r"|\bdifferent\s+(?:aspects|concepts|features)\s+(?:of|related\s+to)\b"
    r"|\b(?:a|an|the)\s+(?:\w+\s+)?summary\s+of\b|\bsummari[sz]e\b",
    re.IGNORECASE,
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
    return _informative(_folded(query))


def searched_terms(query: str) -> list[str]:
    """The terms recall searches for: the query's, without the phrases that frame a question about the
    conversation itself (`_FRAME`), unless nothing else is left; then the kinds of a noun compound it
    names (`memory.text.wordnet.narrower`: taekwondo and judo for "martial arts")."""
    said = _folded(_FRAME.sub(lambda m: f" {m.group('keep') or ''} ", query))
    if all(w in STOP_WORDS for w in said):
        said = _folded(query)
    terms = _informative(said)
    # a compound holds no function word: "" breaks the run of words there, so no lookup spans it
    kinds = narrower([w if w not in STOP_WORDS else "" for w in said])
    return terms + [k for k in kinds if k not in terms][: max(0, MAX_TERMS - len(terms))]


def _folded(text: str) -> list[str]:
    return [w.casefold() for w in query_words(text)]


def _informative(said: list[str]) -> list[str]:
    """The distinct words of `said` that are no stop words (all of them when none is), at most `MAX_TERMS`."""
    distinct = list(dict.fromkeys(said))
    return ([w for w in distinct if w not in STOP_WORDS] or distinct)[:MAX_TERMS]


def selective_terms(conn: sqlite3.Connection, terms: list[str], budget: int) -> tuple[list[str], bool]:
    """The rarest terms whose documents add up to at most `budget` (always at least one),
    and whether even those are over the budget.

    A term found in a large share of the nodes adds little to BM25 but costs a
    score for every node it is in; leaving it out keeps a recall's cost bounded
    by the budget, not by the size of the graph."""
    index = text_index(conn)
    stems = index.stems(conn, terms)
    held = index.documents(conn, list(dict.fromkeys(t for tokens in stems.values() for t in tokens)), budget)
    counted = []
    for term, tokens in stems.items():
        counted.append((min((held[token] for token in tokens), default=0), term))
    counted.sort()
    kept, total = [], 0
    for docs, term in counted:
        if kept and total + docs > budget:
            break
        kept.append(term)
        total += docs
    return kept, total > budget
