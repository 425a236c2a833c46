"""Newer before older: when two matches say the same thing with a different value, the later one ranks first.

A person restates a fact when it changes ("the API now answers in 250ms",
after "it answers in 400ms"); both turns match a question about it nearly
as well, and plain BM25 orders them by accident. Among the best-ranked
matches, a later node that is a near-duplicate of an earlier one moves just
above it: the older stays in the list, right below, as the history it is.

Two matches are a restatement for a query when the later holds every query
term the earlier holds (at least two), the two share at least `ALIKE` of
their words (of three letters or more), the later states a number the
earlier did not (the day a turn was said aside: the newer-value rule,
`memory.text.values.changes`), its direct match (the lexical and vector parts of its
score) is at least `CLOSE` of the earlier one's, and it ranks no more than
`REACH` places below it. The direct match, not the whole score: what the
graph adds is context, and experience that lifted the older statement (a
fact that helped answer an earlier question) is no reason to hide the newer
one (the evolving graph kept an old plan above the turn that said it
happened). Both must be said by the same
speaker, and not by an assistant: an assistant repeats and elaborates values,
it does not change them, and another person's reply is not a restatement
(a friend's answer with a number of her own moved above the
turn a question asked for).
A person who updates a value says it in a new message about the same thing,
in new words around it, sharing a fifth or so of its words with the one it
updates, so requiring half (as this rule first did) found almost none of
them. What keeps
the looser word test from moving unrelated turns is the query: the later must
hold all of the query terms the earlier does, and sit right below it, where a
lexical ranking puts two statements of one fact; reaching further moved a
later turn from below the first five into them. How `ALIKE`, `CLOSE` and
`REACH` measured against the rule before: docs/benchmarks.md, "Figures behind the code's choices".
"Later" is the day the node was said
(`meta.date`, which conversations record) and then the order nodes were
stored in (their id).
A move adds a `newer` part to the node's score, so the parts still sum to
it and a person sees why it came first. Standard library only: the hook
process ranks through this (memory/hooks/recall.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from loci.memory.graph.records import Node
from loci.memory.text.tokens import tokens
from loci.memory.text.values import changes, numbers

__all__ = ["ALIKE", "CLOSE", "REACH", "WINDOW", "Scored", "held_terms", "newer_first", "terms_held"]

ALIKE = 0.15
CLOSE = 0.7
REACH = 2
WINDOW = 20
_MIN_SHARED = 2
_MIN_WORD = 3  # the shortest word two statements are compared on

Scored = tuple[float, int, dict[str, float]]  # (score, node id, the parts that sum to it)


def newer_first(
    scored: list[Scored],
    terms: list[str],
    nodes: Callable[[list[int]], dict[int, Node]],
    voices: frozenset[str] = frozenset(),
    known: dict[int, frozenset[str]] | None = None,
) -> list[Scored]:
    """`scored` (best first) with each near-duplicate restatement moved just above the older match it restates;
    `nodes` reads the nodes of the first `WINDOW` ids, and `known` holds the query terms of the nodes a step before
    this one read (`terms_held`). Turns of the `voices` speakers (an assistant's, which repeat and elaborate the
    person's values) neither move nor are moved past."""
    head = scored[:WINDOW]
    if len(head) < 2 or len(terms) < _MIN_SHARED:
        return scored
    found = nodes([node_id for _, node_id, _ in head])
    held = terms_held(found, terms, {} if known is None else known)
    held = {node_id: held[node_id] for _, node_id, _ in head if node_id in held}
    speaker = {node_id: _speaker(found[node_id]) for node_id in held}
    own = {node_id for node_id, said_by in speaker.items() if said_by not in voices}
    # A node's numbers and words are read only when a pair gets that far: long turns make them the dear part.
    read_values: dict[int, frozenset[str]] = {}
    read_words: dict[int, frozenset[str]] = {}

    def values(node_id: int) -> frozenset[str]:
        if node_id not in read_values:
            read_values[node_id] = _values(found[node_id])
        return read_values[node_id]

    def words(node_id: int) -> frozenset[str]:
        if node_id not in read_words:
            read_words[node_id] = _words(found[node_id].text)
        return read_words[node_id]

    order = [item for item in head if item[1] in held]
    moved: list[Scored] = []
    while order:
        first = order.pop(0)
        mine = first[1]
        # A match restates nothing unless the person said it and it holds enough of the query.
        if mine not in own or len(held[mine]) < _MIN_SHARED:
            moved.append(first)
            continue
        later = [
            item
            for item in order[:REACH]
            if item[1] in own
            and speaker[item[1]] == speaker[mine]
            and _match(item) >= CLOSE * _match(first)
            and _restates(held[mine], held[item[1]])
            and changes(values(mine), values(item[1]))
            and _alike(words(mine), words(item[1]))
            and _when(found[item[1]]) > _when(found[mine])
        ]
        if later:
            newest = max(later, key=lambda item: _when(found[item[1]]))
            order.remove(newest)
            lift = round(first[0] - newest[0] + 0.0001, 4)
            moved.append((round(first[0] + 0.0001, 4), newest[1], {**newest[2], "newer": lift}))
        moved.append(first)
    return moved + [item for item in head if item[1] not in held] + scored[WINDOW:]


def terms_held(nodes: dict[int, Node], terms: list[str], known: dict[int, frozenset[str]]) -> dict[int, frozenset[str]]:
    """The query terms each of `nodes` holds (`held_terms`), read once a node for a recall: `known` keeps what the
    steps before read (reading a long turn's terms is the dear part of a step), and gets what this one read."""
    for node_id, node in nodes.items():
        if node_id not in known:
            known[node_id] = held_terms(node.text, terms)
    return {node_id: known[node_id] for node_id in nodes}


def held_terms(text: str, terms: list[str]) -> frozenset[str]:
    """The query terms a text holds, matched by their first letters (the index stems them; this need not)."""
    folded = text.casefold()
    return frozenset(t for t in terms if _at_boundary(folded, t.casefold()[: max(4, len(t) - 2)]))


def _at_boundary(text: str, prefix: str) -> bool:
    r"""Whether `prefix` occurs in `text` at a word boundary: `re.search(r"\b" + re.escape(prefix), text)`, found
    with `str.find` (a regex that opens with `\b` tries every position of a long turn; `find` skips to the
    candidates). `\w` is `str.isalnum()` or `_`, as in `re`."""
    if not prefix:
        return re.search(r"\b", text) is not None
    wordy = _word_char(prefix[0])
    at = text.find(prefix)
    while at >= 0:
        before = at > 0 and _word_char(text[at - 1])
        if before != wordy:
            return True
        at = text.find(prefix, at + 1)
    return False


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _restates(older: frozenset[str], newer: frozenset[str]) -> bool:
    """Whether the later text holds every query term the earlier holds (at least `_MIN_SHARED` of them)."""
    return len(older) >= _MIN_SHARED and older <= newer


def _values(node: Node) -> frozenset[str]:
    """The numbers a node states, leaving out the day it was said (a conversation turn's `[8 May 2023]` head)."""
    text = node.text
    spoken = str(node.meta.get("spoken_date") or "")
    if spoken:
        text = text.replace(spoken, " ")
    return numbers(text)


def _words(text: str) -> frozenset[str]:
    """The words of a text two statements are compared on: the index's words (`memory.text.tokens`) of
    letters only, at least `_MIN_WORD` long."""
    return frozenset(word for word in tokens(text) if len(word) >= _MIN_WORD and word.isalpha())


def _alike(older: frozenset[str], newer: frozenset[str]) -> bool:
    """Whether two texts share enough of their words to be one statement made twice."""
    return len(older & newer) >= ALIKE * len(older | newer)


def _match(item: Scored) -> float:
    """How well a node's own words (and meaning) match the query: its score without the context around it."""
    return item[2].get("lexical", 0.0) + item[2].get("vector", 0.0)


def _speaker(node: Node) -> str:
    return str(node.meta.get("speaker") or "").casefold()


def _when(node: Node) -> tuple[str, int]:
    return (str(node.meta.get("date") or ""), node.id)
