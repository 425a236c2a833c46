"""The one repeat check: where a text starts saying again what it said (a small model that loops).

`first_repeat` takes the parts of a text in order (its sentences, or its
runs of words) and gives the first part that an earlier one already said,
compared by `key`: by default its words (`flat`: the index's words,
`memory.text.tokens`, case folded and diacritics removed, so punctuation and
case do not hide a repeat). A part shorter than `min_chars` (by its key)
may be said again ("Yes." twice is no loop). The answer check cuts an
answer there (`runtime.reading.answers.clean_answer`), and so does the long
document job (`runtime.digest.verdict.cut_repeat`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from loci.memory.text.tokens import tokens

__all__ = ["first_repeat", "flat"]


def flat(text: str) -> str:
    """`text` as its words alone, folded, one space apart: what two texts that say the same words share."""
    return " ".join(tokens(text))


def first_repeat(parts: Iterable[str], *, key: Callable[[str], str] = flat, min_chars: int = 0) -> int | None:
    """The index of the first of `parts` whose `key` an earlier part had (and at least `min_chars` long);
    None when no part repeats."""
    seen: set[str] = set()
    for index, part in enumerate(parts):
        said = key(part)
        if len(said) >= min_chars and said in seen:
            return index
        seen.add(said)
    return None
