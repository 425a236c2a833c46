"""What a line gives for the thing asked, and `done` only for that value: no model, the lines as files write them."""

from __future__ import annotations

from loci.runtime.reading.fields import answer_kind, asked_names, definition, field, meant_names, names, options
from loci.runtime.reading.spans import Span, candidate_spans
from loci.runtime.reading.values import not_the_value

SHOWN = (
    "doc:1 lines 32-99:\n"
    "32| DEFAULT_ENTROPY = 32  # number of bytes to return by default\n"
    "42| COPY_BUFSIZE = 1024 * 1024 if _WINDOWS else 64 * 1024\n"
    "45|         nbytes = DEFAULT_ENTROPY\n"
    "53| __author__ = 'Ka-Ping Yee <ping@zesty.ca>'\n"
    "98| BPF = 53        # Number of bits in a float\n"
    "99| RECIP_BPF = 2 ** -BPF\n"
)
MANUAL = (
    "doc:1 lines 150-170:\n"
    "150|        -r, --reverse\n"
    "152|        -S     sort by file size, largest first\n"
    "154|        --sort=WORD\n"
    "169|        -t     sort by time, newest first; see --time\n"
)


def test_a_line_gives_a_names_value_a_fields_value_and_a_manuals_options() -> None:
    assert definition("BPF = 53        # Number of bits in a float", "BPF") == "53"
    assert definition("RECIP_BPF = 2 ** -BPF", "BPF") is None and definition("x == 3", "x") is None
    assert field("Upstream-Name: GNU Gzip") == ("Upstream-Name", "GNU Gzip", "")
    assert field("# Written by Greg Ward <gward@python.net>") == ("Written by", "Greg Ward <gward@python.net>", "")
    assert field("[17 May 2023] Caroline: hello") is None  # a conversation turn is no field
    assert names("1995-2017 Bdale Garbee <bdale@gag.com>") == "Bdale Garbee"
    assert options("       -S     sort by file size, largest first") == ["-S"]
    assert options("  -a, --all   do not ignore entries") == ["-a", "--all"] and options("sort by -S") == []


def test_a_question_names_what_it_asks_about_in_its_own_words_too() -> None:
    assert asked_names("What is the value of BPF?") == ["BPF"] and asked_names("Who wrote uuid?") == []
    lines = [row.split("| ", 1)[1] for row in SHOWN.splitlines()[1:]]
    assert "COPY_BUFSIZE" in meant_names("How large is shutil's copy buffer size?", lines)
    assert "DEFAULT_ENTROPY" in meant_names("How many bytes of entropy are used by default?", lines)
    assert answer_kind("Which ls option sorts by size?") == "option"
    assert answer_kind("Which exception does check_call raise?") == "exception"


def test_the_candidates_are_the_value_the_option_or_the_field_asked_for() -> None:
    assert candidate_spans(SHOWN, "What is the value of BPF?") == [Span("53", "doc:1", 98)]
    assert candidate_spans(SHOWN, "How large is the copy buffer size?")[0].text.endswith("64 * 1024")
    assert candidate_spans(SHOWN, "How many bits in a float?") == [Span("53", "doc:1", 98)]  # its comment
    assert [s.text for s in candidate_spans(SHOWN, "Who wrote the uuid module?")][0] == "Ka-Ping Yee"
    assert candidate_spans(MANUAL, "Which ls option sorts by file size, largest first?") == [Span("-S", "doc:1", 152)]
    assert candidate_spans(SHOWN, "How are you today?") == []


def test_done_needs_the_value_the_asked_names_line_assigns() -> None:
    asked = "What is the value of COPY_BUFSIZE?"
    assert "not the value" in (not_the_value("1024", SHOWN, asked) or "")
    assert not_the_value("64 * 1024, or 1024 * 1024 on Windows", SHOWN, asked) is None
    assert "not the value" in (not_the_value("2", SHOWN, "What is the value of BPF?") or "")
    assert not_the_value("53", SHOWN, "What is the value of BPF?") is None
    raised = "Which exception does check_call raise?"
    assert "names none" in (not_the_value("child_exception_type(err_msg)", SHOWN, raised) or "")
    assert not_the_value("CalledProcessError", SHOWN, raised) is None
