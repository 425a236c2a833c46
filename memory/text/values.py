"""The newer-value rule: a later statement of the same thing that states a value the earlier did not changes it.

A person restates a fact when it changes ("coverage is 85%", later
"coverage is now 78%"; "the API answers in 400ms", then "in 250ms"). Two
readers follow the rule, each deciding for itself which statements are of
the same thing: memory recall puts the newer restatement first
(`memory.graph.newer`), and the answer check lets a number claim stand only
when no later line changes it (`runtime.reading.values.superseded`).
`changes` is the rule; `numbers` and `measures` read the values a text
states (any number, for recall; a number with its unit, for the answer
check, where a day before a month is a date and not such a value: a chat's
later "28 August" does not change "23 August").

Standard library only: the hook process ranks through this.
"""

from __future__ import annotations

import re
from collections.abc import Set

__all__ = ["changes", "measures", "numbers"]

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_MEASURE = re.compile(r"(?<![\w.,])(\d+(?:[.,]\d+)*)\s*(%|[A-Za-z]+)")
# A number before a month is a day of a date, not a value a later line restates ("23 August", then "28 August").
_MONTHS = {
    month[:length]
    for month in ("january february march april may june july august september october november december").split()
    for length in (3, len(month))
} | {"sept"}


def changes(older: Set[object], newer: Set[object]) -> bool:
    """Whether a later statement changes an earlier one: the earlier states a value and the later one it did not."""
    return bool(older) and bool(newer - older)


def numbers(text: str) -> frozenset[str]:
    """The numbers `text` states, as written (`2.5`, `1,000`, `10:30`)."""
    return frozenset(_NUMBER.findall(text))


def measures(text: str) -> set[tuple[str, str]]:
    """The numbers `text` states with the unit right after each (`85%`, `250 ms`, `3 calls`), as `(number without
    thousands commas, unit case folded)`; a day before a month is not one."""
    found = {(value.replace(",", ""), unit.casefold()) for value, unit in _MEASURE.findall(text)}
    return {(value, unit) for value, unit in found if unit not in _MONTHS}
