"""Dates in remembered text: when a conversation happened, and what its relative dates meant.

"I went there yesterday", said on 8 May 2023, means 7 May 2023; a question
asked a year later ("what happened in May 2023?") can only find it if the
resolved date is written down when the turn is stored. `resolve_relative`
finds the common relative expressions of English (yesterday, last night, last
Saturday, last weekend, two weeks ago, last month, next year, this summer...)
and gives each one's date in words against the day it was said: a day as
"7 May 2023", a month as "April 2023", a year as "2022", a season as
"summer 2023". Words are what BM25 matches, so a question's time words
("May", "2023") meet them.

`parse_when` reads the date formats that transcripts and logs write
("1:56 pm on 8 May, 2023", "8 May 2023", "2023-05-08", ISO timestamps, BEAM's "March-15-2024").
Only stated expressions are resolved; vague ones ("recently", "the other
day") are left as they are.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

__all__ = ["parse_when", "resolve_relative", "spoken_date"]

_FORMATS = (
    "%I:%M %p on %d %B, %Y",
    "%I:%M %p on %d %b, %Y",
    "%d %B, %Y",
    "%d %B %Y",
    "%B %d, %Y",
    "%Y-%m-%d",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%dT%H:%M:%S",
    "%B-%d-%Y",
)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3, "couple of": 2, "few": 3}  # fmt: skip
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
_COUNT = r"(\d+|a couple of|couple of|a few|few|an|a|one|two|three|four|five|six|seven|eight|nine|ten)"
_PATTERNS = [
    ("ago", re.compile(rf"\b{_COUNT} (day|week|month|year)s? ago\b")),
    ("day_before", re.compile(r"\bthe day before yesterday\b")),
    ("yesterday", re.compile(r"\b(yesterday|last night)\b")),
    ("today", re.compile(r"\b(today|tonight|this morning|this afternoon|this evening)\b")),
    ("tomorrow", re.compile(r"\btomorrow\b")),
    ("weekday", re.compile(rf"\b(last|this past|next|this) ({'|'.join(_WEEKDAYS)})\b")),
    ("weekend", re.compile(r"\b(last|this past|next|this) weekend\b")),
    ("unit", re.compile(r"\b(last|this past|past|next|this) (week|month|year)\b")),
    ("season", re.compile(rf"\b(last|this past|next|this) ({'|'.join(_SEASONS)})\b")),
]


def parse_when(text: object) -> date | None:
    """The day a date string names, or None when it is in no known format."""
    value = re.sub(r"\s+", " ", str(text or "")).strip()
    if not value:
        return None
    for fmt in _FORMATS:
        try:
            return datetime.strptime(value, fmt).date()
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(value).date()
    except ValueError:
        return None


def spoken_date(day: date) -> str:
    """`7 May 2023`: the words a question about that day would use."""
    return f"{day.day} {day:%B %Y}"


def resolve_relative(text: str, said: date) -> list[tuple[str, str]]:
    """`(expression, its date in words)` for each relative date in `text`, said on the day `said`."""
    found: list[tuple[str, str]] = []
    lowered = text.lower()
    taken: list[tuple[int, int]] = []
    for name, pattern in _PATTERNS:
        for match in pattern.finditer(lowered):
            if any(start < match.end() and match.start() < end for start, end in taken):
                continue
            resolved = _resolve(name, match, said)
            if resolved:
                taken.append(match.span())
                found.append((text[match.start() : match.end()], resolved))
    return found


def _resolve(name: str, match: re.Match[str], said: date) -> str | None:
    if name == "ago":
        count = _NUMBERS.get(match.group(1)) or int(match.group(1))
        return _shift(said, match.group(2), -count)
    if name in ("day_before", "yesterday", "today", "tomorrow"):
        days = {"day_before": -2, "yesterday": -1, "today": 0, "tomorrow": 1}[name]
        return spoken_date(said + timedelta(days=days))
    when, what = match.group(1), match.group(match.re.groups)
    step = 1 if when == "next" else 0 if when == "this" else -1
    if name in ("weekday", "weekend"):
        weekday = 5 if name == "weekend" else _WEEKDAYS.index(what)
        return spoken_date(_weekday(said, weekday, step))
    if name == "season":
        year = said.year + step if step else said.year
        return f"{what} {year}"
    return _shift(said, what, step)


def _weekday(said: date, weekday: int, step: int) -> date:
    """The `weekday` before `said` (step -1), after it (1), or in its week (0)."""
    if step < 0:
        return said - timedelta(days=(said.weekday() - weekday - 1) % 7 + 1)
    if step > 0:
        return said + timedelta(days=(weekday - said.weekday() - 1) % 7 + 1)
    return said + timedelta(days=weekday - said.weekday())


def _shift(said: date, unit: str, count: int) -> str:
    """The day, week, month or year `count` units from `said`, in words at that unit's precision."""
    if unit == "day":
        return spoken_date(said + timedelta(days=count))
    if unit == "week":
        return f"week of {spoken_date(said + timedelta(weeks=count))}"
    if unit == "month":
        month = said.month - 1 + count
        return f"{date(said.year + month // 12, month % 12 + 1, 1):%B %Y}"
    return str(said.year + count)
