"""`judge(answer, shown)`: the one check of an answer, pure, on typed lines and fields, never on parsed text."""

from __future__ import annotations

from loci.runtime.prompt.shown import Lines, ShownLine
from loci.runtime.reading.judge import Shown, judge

ARGPARSE = Lines(
    (
        "doc:1 argparse.py (lines 1-2):",
        ShownLine("doc:1", 1, "# Original author Steven J. Bethard."),
        ShownLine("doc:1", 2, "# New maintainer as of 29 August 2019:  Raymond Hettinger"),
    )
)
QUESTION = "Who is the original author of argparse?"


def test_an_answer_on_a_line_about_the_question_is_done() -> None:
    verdict = judge("Steven J. Bethard", Shown(ARGPARSE, QUESTION))
    assert verdict.done and verdict.reason is None and verdict.missing == ()


def test_an_answer_whose_claims_no_line_holds_is_partial_and_names_them() -> None:
    verdict = judge("Guido Rossum", Shown(ARGPARSE, QUESTION))
    assert verdict.status == "partial" and verdict.missing == ("Guido", "Rossum")
    assert verdict.reason == "not grounded: the answer says 'Guido', 'Rossum', which no line shown says"


def test_a_line_the_answer_cites_beside_those_shown_grounds_it() -> None:
    cited = (ShownLine("doc:1", 40, "# Thanks to Guido van Rossum, who reviewed it."),)
    shown = Shown(ARGPARSE, "Who reviewed argparse?")
    assert not judge("Guido van Rossum", shown).done
    assert judge("Guido van Rossum", shown.citing(cited)).done and shown.cited == ()  # the original is unchanged


def test_the_value_a_line_assigns_is_checked_only_where_lines_are_shown() -> None:
    rows = (ShownLine("doc:1", 1, "BPF = 53"), ShownLine("doc:1", 2, "RECIP_BPF = 2 ** -BPF"))
    lines, question = Lines(("doc:1 lines 1-2:", *rows)), "What is the value of BPF in random?"
    verdict = judge("2", Shown(lines, question, ranked=question, asked=question))  # "2" is on a line about BPF
    assert verdict.status == "partial" and "gives '53'" in (verdict.reason or "")
    assert judge("2", Shown(lines, question, ranked=question, asked=question, values=False)).done


def test_the_notes_recalled_for_a_question_hold_claims_as_the_question_does() -> None:
    task = 'Who keeps the list?\n\n<stored-notes source="loci">\n- mem:2: Marta Okafor keeps the list\n</stored-notes>'
    assert judge("Marta Okafor", Shown(Lines.of("nothing about it"), task)).done


def test_text_that_came_in_as_text_is_read_once_into_typed_rows() -> None:
    text = "12| before any header\ndoc:3 lines 7-8:\n7| PORT = 8080\n...\n8|no space"
    lines = Lines.parse(text)
    assert list(lines.rows()) == [
        ShownLine("", 12, "before any header"),
        ShownLine("doc:3", 7, "PORT = 8080"),
        ShownLine("doc:3", 8, "no space"),
    ]
    assert list(lines.others()) == ["doc:3 lines 7-8:", "..."]
    assert (
        Lines.of(lines, "", "after").text
        == "12| before any header\ndoc:3 lines 7-8:\n7| PORT = 8080\n...\n8| no space\n\nafter"
    )


def test_the_line_a_span_was_read_off_is_about_the_question() -> None:
    # bash's copyright file: the span rule reads a "Who ..." question's answer off the first line that names
    # people as people; the grounding, ranking lines by the question's words, had made it `partial`
    packaged = ShownLine("doc:1", 3, "It was put together by Matthias Klose <doko@debian.org>, from sources at")
    lines = Lines(
        (
            "doc:1 copyright (lines 1-9):",
            packaged,
            ShownLine("doc:1", 8, "Bash is the GNU Project's Bourne Again SHell, a complete implementation of the"),
            ShownLine("doc:1", 9, "POSIX shell spec, but also with interactive command line editing, job control on"),
        )
    )
    question = "Who packaged the Bourne Again shell for Debian?"
    shown = Shown(lines, question, ranked=question, asked=question)
    assert not judge("Matthias Klose", shown).done
    assert judge("Matthias Klose", Shown(lines, question, ranked=question, asked=question, chosen=(packaged,))).done
