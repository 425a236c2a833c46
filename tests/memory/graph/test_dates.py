"""Relative dates resolved against the day they were said, and the date formats transcripts use."""

from __future__ import annotations

from datetime import date

import pytest

from loci.memory.graph.dates import parse_when, resolve_relative, spoken_date

MONDAY = date(2023, 5, 8)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", date(2023, 5, 8)),
        ("10:00 am on 1 January, 2024", date(2024, 1, 1)),
        ("8 May 2023", date(2023, 5, 8)),
        ("2023-05-08", date(2023, 5, 8)),
        ("2023-05-08T10:00:00+00:00", date(2023, 5, 8)),
        ("sometime in spring", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_when_reads_transcript_dates(text: object, expected: date | None) -> None:
    assert parse_when(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group yesterday", [("yesterday", "7 May 2023")]),
        ("Last night was fun", [("Last night", "7 May 2023")]),
        ("the day before yesterday it rained", [("the day before yesterday", "6 May 2023")]),
        ("Last Saturday we hiked", [("Last Saturday", "6 May 2023")]),
        ("this past Monday", [("this past Monday", "1 May 2023")]),
        ("next Friday", [("next Friday", "12 May 2023")]),
        ("last weekend", [("last weekend", "6 May 2023")]),
        ("two weeks ago I painted", [("two weeks ago", "week of 24 April 2023")]),
        ("a few days ago", [("a few days ago", "5 May 2023")]),
        ("3 months ago", [("3 months ago", "February 2023")]),
        ("last month and last year", [("last month", "April 2023"), ("last year", "2022")]),
        ("next month", [("next month", "June 2023")]),
        ("this summer", [("this summer", "summer 2023")]),
        ("recently, the other day", []),
    ],
)
def test_relative_dates_resolve_against_the_day_said(text: str, expected: list[tuple[str, str]]) -> None:
    assert resolve_relative(text, MONDAY) == expected


def test_a_year_boundary_is_crossed() -> None:
    assert resolve_relative("last month", date(2024, 1, 15)) == [("last month", "December 2023")]
    assert resolve_relative("next month", date(2023, 12, 15)) == [("next month", "January 2024")]
    assert spoken_date(date(2024, 2, 29)) == "29 February 2024"
