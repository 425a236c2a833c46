"""An answer has the form its question asks for: a name, a number, an address, an option.

The answers below are the bundled model's, marked `done` on the phrasing set before this check.
"""

from __future__ import annotations

import pytest

from loci.runtime.reading.forms import asked_form, common_words, missing_form
from loci.runtime.reading.values import not_the_value


@pytest.mark.parametrize(
    ("question", "answer", "missing"),
    [
        ("Who wrote the module that wraps and fills text?", "The module that wraps and fills text", "person"),
        ("Who wrote Python's JSON encoder and decoder?", "s.decode(detect_encoding(s), 'surrogatepass')", "person"),
        ("On which port does http.client connect for secure connections by default?", "HTTP_PORT", "number"),
        ("what's the max header line length in email?", "None, header_name=None", "number"),
        ("Where can I read about the stream editor online?", "The document says it is available", "address"),
        ("what's the flag to extract into a different dir?", "The flag to extract into a different dir", "option"),
        ("Who wrote the uuid module?", "Ka-Ping Yee", None),
        ("where do I email the bash developers?", "They are at the Eindhoven University of Technology.", "email"),
        ("where do I email the bash developers?", "chet@po.cwru.edu", None),
        ("Who wrote the module that wraps text?", "It is the one written by the Python team.", "person"),
        ("whose copyright is on the BSD license?", "The Regents of the University of California", None),
        ("Who holds the copyright of git?", "Linus Torvalds", None),
        # a short answer a lowercase word continues names a thing (git's `Name: Object stack macros.` field)
        ("Whose name stands first on the rights to git's code?", "Object stack macros", "person"),
        ("Whose are the base files?", "Software in the Public Interest", None),
        ("Who did Caroline go camping with?", "Melanie's kids", None),
        ("Who holds the copyright of git?", "Linus Torvalds and others", None),
        ("How many lines does head print by default?", "10", None),
        ("How many lines does head print by default, 10 or 20?", "10", "number"),  # the question's own number
        ("What URL does the MPL 2.0 Exhibit A notice point to?", "http://mozilla.org/MPL/2.0/", None),
        ("Which ls option sorts by file size, largest first?", "-S", None),
        ("Who is Caroline?", "a transgender woman", None),  # a description answers that
        ("What is the title of section 8?", "Litigation", None),  # no form asked: left to the other checks
    ],
)
def test_an_answer_without_the_form_asked_lacks_it(question: str, answer: str, missing: str | None) -> None:
    assert missing_form(answer, question) == missing


def test_the_forms_asked() -> None:
    assert asked_form("Who is the author of argparse?") == "person"
    assert asked_form("Whose idea was the trip?") == "person"
    assert asked_form("How long may a line be?") == "number"
    assert asked_form("where's the apt repo?") == "address"
    assert asked_form("What is MAXLINELEN in email.header?") is None  # the `email` package, not an address
    assert asked_form("When I show a file without options, how many lines do I get?") == "number"
    assert asked_form("When did Caroline go to the support group?") is None
    # the number asked further on, or with no question word (a user's own phrasings, each `done` while wrong)
    assert asked_form("what is tail's default line count?") == "number"
    assert asked_form("max line size for encoded base64 lines?") == "number"
    # a year is four digits: `12` of calendar's `return year-1, 12` was `done`
    assert asked_form("from which year does the calendar module count timestamps?") == "year"
    assert missing_form("The answer is: 12", "from which year does the calendar module count timestamps?") == "year"
    assert missing_form("1970", "What year does calendar.py use as its epoch?") is None
    assert asked_form("How many years ago?") == "number"
    # a way to do something is asked, not a number
    assert asked_form("how do I make uniq show how many times each line appears?") is None


def test_a_capitalised_word_the_lines_say_in_lower_case_is_no_persons_name() -> None:
    # getpass's `prompt: Written on stream to ask for the input.  Default: 'Password: '`, beside `# Authors: Piers
    # Lauder (original)`, was the answer to "who first wrote python's password prompt module?", `done`
    shown = (
        "3| getpass(prompt[, stream]) - Prompt for a password, with echo turned off.\n"
        "13| # Authors: Piers Lauder (original)\n"
        "33|   prompt: Written on stream to ask for the input.  Default: 'Password: '\n"
        "34|   stream: A writable file object to display the prompt.  Defaults to\n"
        "35|           the tty.  If no tty is available defaults to sys.stderr.\n"
        "47|             # Always try reading and writing directly on the tty first."
    )
    common = common_words(shown)
    asked = "who first wrote python's password prompt module?"
    said = "Written on stream to ask for the input.  Default: 'Password: '"
    assert missing_form(said, asked, common=common) == "person"
    assert missing_form("Piers Lauder (original)", asked, common=common) is None
    assert missing_form(said, asked) is None  # without the lines, `Written` could be a name


def test_an_answer_without_the_form_is_not_the_value() -> None:
    shown = "53| __author__ = 'Ka-Ping Yee <ping@zesty.ca>'"
    assert not_the_value("Ka-Ping Yee", shown, "Who wrote the uuid module?") is None
    problem = not_the_value("The uuid module", shown, "Who wrote the uuid module?")
    assert problem is not None and "a person's name" in problem
