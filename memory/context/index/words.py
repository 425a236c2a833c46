"""The words FTS5's `unicode61` tokenizer sees, and the snippet FTS5 cuts, for an index that is not FTS5.

SQLite indexes the context store's chunks with FTS5 (`unicode61`): a word
is a run of letters and digits, case folded, its diacritics removed, never
stemmed (`memory.text.tokens`, the one index tokenizer); `_`, `-` and `.`
separate words, so `default_format` is the two words `default format` and
a query word `default_format` is that phrase. PostgreSQL indexes the same chunks with a `tsvector` that Loci builds here
(`tsvector_text`) rather than with a text-search configuration, whose
parser reads `os.path` as a file name and `x-ray` as three words: each
word at its place in the chunk (its position, from 1, as FTS5 counts
them), so the two engines hold the same words at the same places, and
BM25 over them (memory/context/index/postgres.py) ranks as FTS5 does.

`snippet` is FTS5's `snippet()` over those words: the window of
`size` words that holds the most distinct query phrases (each phrase 1000,
a repeat 1), centred on them, or starting at a sentence start for a bonus
(100, 120 at the chunk's start), the phrases bracketed, `…` where the
window does not reach an end.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from loci.memory.text.tokens import Word, tokens, word_tokens

__all__ = ["MAX_POSITION", "snippet", "tsvector_text"]

MAX_POSITION = 16_383  # PostgreSQL keeps a word's place up to here (a chunk holds about 4,000 characters)
MAX_PLACES = 256  # the places of one word a tsvector keeps
MAX_LEXEME_BYTES = 2_000  # a tsvector refuses a longer word (FTS5 keeps it; no chunk of text has one)
_SENTENCE_END = re.compile(r"[.:][ \t\n\r]+")  # what ends a sentence for FTS5: where the next word starts


def tsvector_text(text: str) -> tuple[str, int]:
    """`text` as a `tsvector` literal of its words at their places, and its number of words."""
    found = tokens(text)
    places: dict[str, list[int]] = {}
    for position, word in enumerate(found[:MAX_POSITION], 1):
        if (held := places.get(word)) is None:
            places[word] = [position]
        elif len(held) < MAX_PLACES:
            held.append(position)
    if len(found) > MAX_POSITION:  # PostgreSQL keeps the rest at its last place
        for word in found[MAX_POSITION:]:
            held = places.setdefault(word, [])
            if len(held) < MAX_PLACES and (not held or held[-1] < MAX_POSITION):
                held.append(MAX_POSITION)
    # a word is letters and digits: nothing in it to quote
    literal = " ".join(
        f"'{word}':{','.join(map(str, held))}"
        for word, held in places.items()
        if len(word) <= MAX_LEXEME_BYTES // 4 or len(word.encode()) <= MAX_LEXEME_BYTES
    )
    return literal, len(found)


def snippet(text: str, phrases: list[list[str]], size: int, marks: tuple[str, str, str] = ("[", "]", " … ")) -> str:
    """FTS5's `snippet(..., open, close, ellipsis, size)` of one chunk for the query's `phrases` (folded words)."""
    found = word_tokens(text)
    hits = _hits(found, phrases)
    best_score, best_start = 0, 0
    firsts = _sentence_starts(text, found)
    for start, _, _ in hits:
        score, adjusted = _score(hits, len(found), start, size)
        if score > best_score:
            best_score, best_start = score, adjusted
        if firsts and len(found) > size:
            first = max((f for f in firsts if f <= start), default=0)
            if first < start:
                score = _score(hits, len(found), first, size)[0] + (120 if first == 0 else 100)
                if score > best_score:
                    best_score, best_start = score, first
    return _cut(text, found, hits, best_start, size, marks)


def _hits(found: list[Word], phrases: list[list[str]]) -> list[tuple[int, int, int]]:
    """`(first word, phrase, length)` of every place a phrase is found, in order."""
    words = [word for word, _, _ in found]
    places: dict[str, list[int]] = {}
    for index, word in enumerate(words):
        places.setdefault(word, []).append(index)
    hits = [
        (i, p, len(parts))
        for p, parts in enumerate(phrases)
        if parts
        for i in places.get(parts[0], ())
        if words[i : i + len(parts)] == parts
    ]
    return sorted(hits)


def _score(hits: list[tuple[int, int, int]], total: int, start: int, size: int) -> tuple[int, int]:
    """The window at `start`'s score (1000 a phrase, 1 a repeat) and where FTS5 moves it to centre its hits."""
    seen: set[int] = set()
    score, first, last = 0, -1, 0
    for at, phrase, length in hits[bisect_left(hits, (start,)) :]:
        if at >= start + size:
            break
        score += 1 if phrase in seen else 1000
        seen.add(phrase)
        first = at if first < 0 else first
        last = at + length
    adjusted = first - (size - (last - first)) // 2
    return score, max(0, min(adjusted, total - size))


def _sentence_starts(text: str, found: list[Word]) -> list[int]:
    """The words that open a sentence: the first, and each after a `.` or `:` and a space."""
    if not found:
        return []
    ends = {match.end() for match in _SENTENCE_END.finditer(text)}
    return [0] + [index for index, (_, start, _) in enumerate(found[1:], 1) if start in ends]


def _cut(
    text: str, found: list[Word], hits: list[tuple[int, int, int]], start: int, size: int, marks: tuple[str, str, str]
) -> str:
    """Words `start` to `start + size - 1` of `text`, the phrases in them bracketed (overlapping ones as one)."""
    opening, closing, ellipsis = marks
    if not found:
        return text
    last = min(start + size, len(found)) - 1
    spans: list[list[int]] = []
    for at, _, length in hits:
        end = at + length - 1
        if end < start or at > last:
            continue
        if spans and at <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([at, end])
    out = [ellipsis] if start > 0 else []
    offset = found[start][1] if start > 0 else 0
    for first_word, last_word in spans:
        begin = found[max(first_word, start)][1]
        finish = found[min(last_word, last)][2]
        out += [text[offset:begin], opening, text[begin:finish], closing]
        offset = finish
    end = found[last][2]
    out.append(text[offset:end])
    out.append(text[end:] if last >= len(found) - 1 else ellipsis)
    return "".join(out)
