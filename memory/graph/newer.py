"""Newer before older: when two matches say the same thing with a different value, the later one ranks first.

A person restates a fact when it changes ("the API now answers in 250ms",
after "it answers in 400ms"); both turns match a question about it nearly
as well, and plain BM25 orders them by accident. Among the best-ranked
matches, a later node that is a near-duplicate of an earlier one moves just
above it: the older stays in the list, right below, as the history it is.

Two matches are a restatement for a query when they hold the same query
terms (at least two, and all but a fifth of the earlier one's), share at
least `ALIKE` of their words, the later states a number the earlier did not
(the day a turn was said aside), and the later one's score is at least
`CLOSE` of the earlier one's. Both must be the person's own words: an
assistant repeats and elaborates values, it does not change them. The
thresholds are strict on purpose: on BEAM dev, where a project's user turns
share much of their vocabulary, sharing 30% of words moved unrelated turns
and cost recall@1 0.01 to 0.02; at 50% the rule is neutral there and on
LoCoMo. "Later" is the day the node was said (`meta.date`, which
conversations record) and then the order nodes were stored in (their id).
A move adds a `newer` part to the node's score, so the parts still sum to
it and a person sees why it came first. Standard library only: the hook
process ranks through this (memory/hooks/recall.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memory.graph.records import Node

__all__ = ["ALIKE", "CLOSE", "WINDOW", "newer_first"]

ALIKE = 0.5
CLOSE = 0.7
WINDOW = 20
_MIN_SHARED = 2
_WORD = re.compile(r"[^\W\d_]{3,}")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")

Scored = tuple[float, int, dict[str, float]]


def newer_first(
    scored: list[Scored],
    terms: list[str],
    nodes: Callable[[list[int]], dict[int, Node]],
    voices: frozenset[str] = frozenset(),
) -> list[Scored]:
    """`scored` (best first) with each near-duplicate restatement moved just above the older match it restates;
    `nodes` reads the nodes of the first `WINDOW` ids. Turns of the `voices` speakers (an assistant's, which
    repeat and elaborate the person's values) neither move nor are moved past."""
    head = scored[:WINDOW]
    if len(head) < 2 or len(terms) < _MIN_SHARED:
        return scored
    found = nodes([node_id for _, node_id, _ in head])
    held = {node_id: _held(found[node_id].text, terms) for _, node_id, _ in head if node_id in found}
    own = {node_id for node_id in held if str(found[node_id].meta.get("speaker") or "").casefold() not in voices}
    # A node's numbers and words are read only when a pair gets that far: long turns make them the dear part.
    read_values: dict[int, frozenset[str]] = {}
    read_words: dict[int, frozenset[str]] = {}

    def values(node_id: int) -> frozenset[str]:
        if node_id not in read_values:
            read_values[node_id] = _values(found[node_id])
        return read_values[node_id]

    def words(node_id: int) -> frozenset[str]:
        if node_id not in read_words:
            read_words[node_id] = frozenset(_WORD.findall(found[node_id].text.casefold()))
        return read_words[node_id]

    order = [item for item in head if item[1] in held]
    moved: list[Scored] = []
    while order:
        first = order.pop(0)
        later = [
            item
            for item in order
            if first[1] in own
            and item[1] in own
            and item[0] >= CLOSE * first[0]
            and _restates(held[first[1]], held[item[1]])
            and _changed(values(first[1]), values(item[1]))
            and _alike(words(first[1]), words(item[1]))
            and _when(found[item[1]]) > _when(found[first[1]])
        ]
        if later:
            newest = max(later, key=lambda item: _when(found[item[1]]))
            order.remove(newest)
            lift = round(first[0] - newest[0] + 0.0001, 4)
            moved.append((round(first[0] + 0.0001, 4), newest[1], {**newest[2], "newer": lift}))
        moved.append(first)
    return moved + [item for item in head if item[1] not in held] + scored[WINDOW:]


def _held(text: str, terms: list[str]) -> frozenset[str]:
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
    shared = older & newer
    return len(shared) >= _MIN_SHARED and len(shared) >= 0.8 * len(older)


def _values(node: Node) -> frozenset[str]:
    """The numbers a node states, leaving out the day it was said (a conversation turn's `[8 May 2023]` head)."""
    text = node.text
    spoken = str(node.meta.get("spoken_date") or "")
    if spoken:
        text = text.replace(spoken, " ")
    return frozenset(_NUMBER.findall(text))


def _alike(older: frozenset[str], newer: frozenset[str]) -> bool:
    """Whether two texts share enough of their words to be one statement made twice."""
    return len(older & newer) >= ALIKE * len(older | newer)


def _changed(older: frozenset[str], newer: frozenset[str]) -> bool:
    """Whether the later text states a value the earlier did not (a new number, version or count)."""
    return bool(older) and bool(newer - older)


def _when(node: Node) -> tuple[str, int]:
    return (str(node.meta.get("date") or ""), node.id)
