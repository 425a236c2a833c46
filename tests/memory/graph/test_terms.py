"""Query terms: a word's tokens as the memory index stems them, asked of FTS5 once per process."""

from __future__ import annotations

import sqlite3

from loci.memory.graph.fts.sqlite import stems as term_stems
from loci.memory.graph.terms import searched_terms


def test_a_words_stems_come_from_fts5_once_and_then_without_a_statement() -> None:
    first = sqlite3.connect(":memory:")
    asked: list[str] = []
    first.set_trace_callback(asked.append)
    assert term_stems(first, ["unkeptplaying", "unkept-x-ray"]) == {
        "unkeptplaying": ["unkeptplai"],
        "unkept-x-ray": ["unkept", "x", "rai"],
    }
    assert any("loci_stem_vocab" in sql for sql in asked)

    other = sqlite3.connect(":memory:")
    again: list[str] = []
    other.set_trace_callback(again.append)
    assert term_stems(other, ["unkept-x-ray", "unkeptplaying"]) == {
        "unkept-x-ray": ["unkept", "x", "rai"],
        "unkeptplaying": ["unkeptplai"],
    }
    assert again == []


def test_the_frame_of_a_question_is_left_out_and_what_it_frames_kept() -> None:
    framed = "Can you list the order in which I brought up my budget tracker across my weather app conversations?"
    assert searched_terms(framed) == ["budget", "tracker", "weather", "app"]
    assert searched_terms("What did Gina order in the session management talk?") == [
        "gina",
        "order",
        "session",
        "management",
        "talk",
    ]
    assert searched_terms("What did I mention?") == ["mention"]
