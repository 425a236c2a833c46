"""`done` means grounded: every claim of an answer is on a line shown, one rule for every run.

Driven by the scripted model over real MCP and SQLite; the bundled GGUF's
side is in `test_grounding_model.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.reading.answers import answer_problem, claims, ungrounded
from loci.runtime.session.session import open_session

SMALL = 135_000_000
# without the e-mail addresses the real file has, so the names are not spans a person question takes
# (`runtime.reading.fields.persons`) and the model writes the answer these tests check
ARGPARSE = (
    "# Original author Steven J. Bethard.\n"
    "# New maintainer as of 29 August 2019:  Raymond Hettinger\n"
    "\n"
    '"""Command-line parsing library"""\n'
    "__version__ = '1.1'\n"
)
QUESTION = "Who is the author of argparse?"


@pytest.fixture
def argparse_file(tmp_path: Path) -> Path:
    path = tmp_path / "argparse.py"
    path.write_text(ARGPARSE, encoding="utf-8")
    return path


def test_an_answers_claims_are_its_names_numbers_identifiers_and_quoted_phrases() -> None:
    assert claims("The author of argparse is Raymond Hettinger.") == ["Raymond", "Hettinger"]
    assert claims("The value of DEFAULT_FORMAT is PAX_FORMAT, since 2019.") == ["DEFAULT_FORMAT", "PAX_FORMAT", "2019"]
    assert claims('It was "put together by Matthias Klose".') == ["put together by Matthias Klose"]
    assert claims("Greg Ward wrote it.") == ["Greg", "Ward"] and claims("Written in plain words.") == []


def test_a_claim_is_grounded_on_a_line_and_not_on_a_line_number() -> None:
    shown = "1| # Author: Steven J. Bethard <steven.bethard@gmail.com>.\n12| x = 9"
    assert ungrounded("Steven J. Bethard", shown, QUESTION) == [] and ungrounded("9", shown) == []
    assert ungrounded("Raymond Hettinger", shown, QUESTION) == ["Raymond", "Hettinger"]
    assert ungrounded("It is 12.", shown) == ["12"]  # a line's number is not what the line says
    code = "1| import sys\n2| _MAXLINE = 65536\n3| _MAXHEADERS = 100\n4| x = [1]"
    asked = "How many headers at most does http.client accept (_MAXHEADERS)?"
    assert ungrounded("1", code, asked) == ["1"] and ungrounded("100", code, asked) == []
    bash = "7| This package was put together by Matthias Klose.\n8| Copyright: (C) 1992 Simon Marshall"
    asked = "Who put together the Debian bash package?"
    assert ungrounded("Simon Marshall", bash, asked) == ["Simon", "Marshall"]
    assert ungrounded("Matthias Klose", bash, asked) == []


def test_a_claim_stands_only_on_a_line_that_answers_the_question_about_as_well_as_the_best() -> None:
    tar = (
        "109| PAX_FORMAT = 2                  # POSIX.1-2001 (pax) format\n"
        "110| DEFAULT_FORMAT = PAX_FORMAT\n"
        "196| def itn(n, digits=8, format=DEFAULT_FORMAT):"
    )
    asked = "What is the value of DEFAULT_FORMAT in tarfile?"
    assert ungrounded("It is 2.", tar, asked) == ["2"] and ungrounded("It is PAX_FORMAT.", tar, asked) == []
    bash = (
        "24| Files: support/bash.xbm\n25| Copyright: (C) 1992 Simon Marshall\n"
        "226| Files: support/man2html.c\n227| Copyright: Richard Verhoeven"
    )
    asked = "Who holds the copyright of support/bash.xbm?"
    assert ungrounded("Richard Verhoeven", bash, asked) == ["Richard", "Verhoeven"]
    gzip = (
        "7| Copyright: 1999-2022 Free Software Foundation, Inc.\n"
        "11| Files: debian/*\n"
        "12| Copyright: 1995-2017 Bdale Garbee <bdale@gag.com>"
    )
    asked = "Who holds the copyright of the gzip debian/* files?"
    assert ungrounded("The Free Software Foundation", gzip, asked) == ["Free", "Software", "Foundation"]


def test_a_number_stands_only_as_a_whole_number() -> None:
    shown = '1| r"""HTTP/1.1 client library\n112| _MAXHEADERS = 100'
    asked = "How many headers at most does http.client accept?"
    assert ungrounded("1", shown, asked) == ["1"] and ungrounded("1.1", shown, asked) == []


async def test_a_short_answer_that_is_a_span_of_a_line_is_done(tmp_path: Path, argparse_file: Path) -> None:
    model = ScriptedModel(["Steven J. Bethard"], parameters=SMALL, context_window=4_096)
    async with open_session(model, tmp_path / "loci.db", files=[argparse_file]) as session:
        result = await session.agent.run(QUESTION)
    model.check_used()
    assert (result.status, result.answer, result.evidence[0].start) == ("done", "Steven J. Bethard", 1)


async def test_an_invented_name_is_sent_back_once_with_the_best_lines_then_partial(
    tmp_path: Path, argparse_file: Path
) -> None:
    invented = "The author of argparse is Simon Marshall, a Lionel project member."
    model = ScriptedModel([invented, invented], parameters=SMALL, context_window=4_096)
    async with open_session(model, tmp_path / "loci.db", files=[argparse_file]) as session:
        result = await session.agent.run(QUESTION)
    model.check_used()
    second = model.calls[1].messages[1]["content"]
    assert "not grounded" in second and "'Simon'" in second
    assert 'doc:1:1: "# Original author Steven J. Bethard' in second
    assert result.status == "partial" and "not grounded" in (result.reason or "")
    assert result.answer.startswith("doc:1:1:") and "Bethard" in result.answer and "Simon" not in result.answer


async def test_an_answer_grounded_on_the_second_ask_is_done(tmp_path: Path, argparse_file: Path) -> None:
    model = ScriptedModel(["Raymond Hettinger wrote it, in 1999.", "Steven J. Bethard"], parameters=SMALL)
    async with open_session(model, tmp_path / "loci.db", files=[argparse_file]) as session:
        result = await session.agent.run(QUESTION)
    model.check_used()
    assert (result.status, result.answer) == ("done", "Steven J. Bethard")


async def test_a_runs_tokens_are_its_ledgers_one_account(tmp_path: Path, argparse_file: Path) -> None:
    model = ScriptedModel(["Steven J. Bethard"], parameters=SMALL, context_window=4_096)
    async with open_session(model, tmp_path / "loci.db", files=[argparse_file]) as session:
        run_id, result = await session.run(QUESTION)
        record = await session.runs.get(run_id)
    model.check_used()
    assert result.tokens > 0 and result.tokens == session.agent.ledger.used == record.tokens


def test_an_answer_that_describes_the_lines_instead_of_answering_is_not_an_answer() -> None:
    talk = "The document contains a list of lines that match the specified format."
    assert "describes the documents" in (answer_problem(talk, frame="", material="", task=QUESTION) or "")
    assert answer_problem("The author is Steven J. Bethard.", frame="", material="", task=QUESTION) is None
    assert answer_problem(talk, frame="", material="", task="What does the document contain?") is None


async def test_an_answer_whose_only_claims_are_the_questions_needs_its_words_on_a_line(tmp_path: Path) -> None:
    path = tmp_path / "cookiejar.py"
    lines = [
        "import time",
        'NETSCAPE_MAGIC_RGX = re.compile("#( Netscape)? HTTP Cookie File")',
        "# a cookie with no name, whereas http.cookiejar regards it as a",
        "    if year < EPOCH_YEAR:",
        "def _timegm(tt):",
        "    year = tt[0]",
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    model = ScriptedModel(["EPOCH_YEAR is a cookie with no value."], parameters=SMALL, context_window=4_096)
    async with open_session(model, tmp_path / "loci.db", files=[path]) as session:
        result = await session.agent.run("What is EPOCH_YEAR in http.cookiejar?")
    model.check_used()
    assert result.status == "partial" and (result.reason or "").startswith("no evidence")


async def test_a_name_asked_about_is_answered_by_the_value_its_line_assigns(tmp_path: Path) -> None:
    path = tmp_path / "cookiejar.py"
    path.write_text("import time\n# a cookie with no name\nEPOCH_YEAR = 1970  # the epoch\n", encoding="utf-8")
    model = ScriptedModel([], parameters=SMALL, context_window=4_096)  # no free text is written
    async with open_session(model, tmp_path / "loci.db", files=[path]) as session:
        result = await session.agent.run("What is EPOCH_YEAR in http.cookiejar?")
    assert (result.answer, result.status, result.evidence[0].start) == ("1970", "done", 3)


async def test_a_partial_answer_keeps_the_models_words_and_cites_the_line_that_holds_what_of_it_stands(
    tmp_path: Path,
) -> None:
    path = tmp_path / "copyright"
    path.write_text(
        # said so that no span names a person (`runtime.reading.fields.persons`): the model writes the answer
        "Source: ftp://ftp.gnu.org/gnu/tar/\nComment:\n  Graham Todd originally wrote GNU tar.\n"
        "  Sergey Poznyakoff maintains it now.\n",
        encoding="utf-8",
    )
    both = "GNU tar was written by Graham Todd and Sergey Poznyakoff."
    model = ScriptedModel([both, both], parameters=SMALL, context_window=4_096)
    async with open_session(model, tmp_path / "loci.db", files=[path]) as session:
        result = await session.agent.run("Who originally wrote GNU tar?")
    model.check_used()
    assert result.status == "partial" and "'Sergey'" in (result.reason or "")
    assert result.answer == both  # the model's best answer, `partial`; the line beside it
    assert [(span.start, span.text.strip()) for span in result.evidence] == [
        (3, "Graham Todd originally wrote GNU tar.")
    ]
