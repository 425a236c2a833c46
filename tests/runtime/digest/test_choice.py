"""A lookup's answer is chosen from the lines its evidence lists (the curl case)."""

from __future__ import annotations

from pathlib import Path

from loci.runtime.digest.choice import best_found, from_evidence, says
from loci.runtime.digest.lexical import Found
from loci.runtime.digest.run import digest
from loci.runtime.models.scripted import ScriptedModel
from tests.runtime.digest_helpers import memory_step

QUESTION = "What is the source URL of curl?"
FOUND = [
    Found(0, 120, 9.0, "Source: https://aopalliance.sourceforge.net"),
    Found(0, 7401, 8.0, "Source: https://curl.se/"),
    Found(0, 88, 7.5, "Source: https://github.com/google/brotli"),
]
AOP = "The source is https://aopalliance.sourceforge.net"
MESSAGES = [{"role": "user", "content": QUESTION}]


def test_the_best_lines_hold_the_most_of_the_questions_words() -> None:
    assert [line.line for line in best_found(FOUND, QUESTION)] == [7401]


async def test_an_answer_from_another_line_is_replaced_by_the_best_line() -> None:
    assert await from_evidence(ScriptedModel([]), MESSAGES, QUESTION, AOP, FOUND) == "Source: https://curl.se/"


async def test_an_answer_that_rests_on_the_best_line_stands() -> None:
    answer = "https://curl.se/"
    assert await from_evidence(ScriptedModel([]), MESSAGES, QUESTION, answer, FOUND) == answer


async def test_among_equal_lines_the_models_likelihood_chooses() -> None:
    found = [Found(0, 3, 5.0, "curl source: https://curl.se/"), Found(0, 9, 4.0, "curl source mirror: ftp.sunet.se")]
    model = ScriptedModel([], scorer=lambda messages, candidate: -1.0 if "ftp" in candidate else -9.0)
    answer = "It is maintained by Daniel."
    assert await from_evidence(model, MESSAGES, QUESTION, answer, found) == "curl source mirror: ftp.sunet.se"
    assert model.scored == [[line.text for line in found]]


async def test_digest_answers_the_curl_question_from_its_curl_line(tmp_path: Path) -> None:
    lines = [f"Files: debian/* of package {n}\nLicense: GPL-2+" for n in range(40)]
    lines[5] = "Upstream-Name: aopalliance\nSource: https://aopalliance.sourceforge.net"
    lines[30] = "Upstream-Name: curl\nSource: https://curl.se/"
    doc = tmp_path / "copyrights.txt"
    doc.write_text("\n".join(lines) + "\n", encoding="utf-8")
    model = ScriptedModel([memory_step, AOP], repeat_last=True)
    record = await digest([doc], QUESTION, model=model, db=tmp_path / "loci.db", strategy="stream")
    assert record["answer"] == "Source: https://curl.se/"
    assert any(item.get("quote") == "Source: https://curl.se/" for item in record["evidence"])


async def test_the_line_marks_a_model_writes_back_are_no_answer() -> None:
    marks = "(doc:1 line 537)\n(doc:1 line 6602)\n(doc:1 line 16755)\n(doc:1 l"
    assert await from_evidence(ScriptedModel([]), MESSAGES, QUESTION, marks, FOUND) == "Source: https://curl.se/"
    echoed = "(doc:1 line 7401) Source: https://curl.se/ (doc:1 line 12"
    assert await from_evidence(ScriptedModel([]), MESSAGES, QUESTION, echoed, FOUND) == "Source: https://curl.se/"


async def test_an_answer_on_the_line_the_best_line_bridges_to_stands() -> None:
    question = "In which city is the room whose key Velmora Quist keeps?"
    found = [
        Found(0, 10, 9.0, "Velmora Quist keeps the key to the amber vault."),
        Found(0, 80, 3.0, "The amber vault is in the city of Tarnhollow."),
        Found(0, 95, 2.5, "The city council met on Tuesday."),
    ]
    model = ScriptedModel([])
    assert await from_evidence(model, MESSAGES, question, "Tarnhollow", found) == "Tarnhollow"
    assert await from_evidence(model, MESSAGES, question, "Tuesday", found) == found[0].text  # no shared word: no hop


BZIP2 = "Who holds the copyright of bzip2?"
BZIP2_FOUND = [
    Found(0, 537, 14.7, "==> bzip2/copyright <=="),
    Found(0, 539, 11.9, "Upstream-Name: bzip2"),
    Found(0, 1783, 8.4, "permission under the Copyright and Similar Rights held by the"),
    Found(0, 543, 10.6, "Copyright: 1996-2010 Julian R Seward <jseward@bzip.org>", anchor=539),
]
# what the scan counted over the whole megabyte: "held" is on 22 lines of 18,951, "bzip2" on 6
BZIP2_COUNTS = {"lines": 18_951, "chars": 1_100_000, "spread": {"copyright": 2_042, "bzip2": 6, "hold": 22}}


def test_the_found_lines_are_weighed_by_the_whole_documents_counts() -> None:
    assert [line.line for line in best_found(BZIP2_FOUND, BZIP2, BZIP2_COUNTS)] == [543]
    # over the four found lines alone, "held" is on one of them and would outweigh "bzip2"
    assert [line.line for line in best_found(BZIP2_FOUND, BZIP2)] == [1783]


def test_a_line_that_only_names_what_is_asked_says_nothing() -> None:
    wanted = {"hold", "copyright", "bzip2"}
    assert not says("==> bzip2-doc/copyright <==", wanted)
    assert says("Upstream-Name: bzip2", wanted)
    assert [line.line for line in best_found(BZIP2_FOUND[:1], BZIP2, BZIP2_COUNTS)] == [537]  # when nothing else is


async def test_an_answer_that_repeats_the_found_lines_gives_way_to_the_best_line() -> None:
    looped = "Source: https://curl.se/ Source: https://curl.se/ Source: https://curl.se/ Source: https://curl.se/"
    model = ScriptedModel([])
    assert await from_evidence(model, MESSAGES, QUESTION, looped, FOUND) == "Source: https://curl.se/"


async def test_digest_answers_who_holds_a_copyright_from_the_field_of_its_record(tmp_path: Path) -> None:
    records = [
        f"Files: src/part{n}/*\nCopyright: 2001 Person Number{n} <p{n}@example.org>\nLicense: GPL-2\n"
        for n in range(80)
    ]
    records[7] = "permission under the Copyright and Similar Rights held by the\nLicensor.\n"
    for n in (20, 30, 40):  # "held" is said on more lines than "bzip2", as in a real megabyte (22 against 6)
        records[n] += "All rights held by the Licensor are reserved.\n"
    records[50] = (
        "Upstream-Name: bzip2\nSource: http://www.bzip.org/\n\n"
        "Files: *\nCopyright: 1996-2010 Julian R Seward <jseward@bzip.org>\nLicense: BSD-variant\n"
    )
    doc = tmp_path / "copyrights.txt"
    doc.write_text("\n".join(records), encoding="utf-8")
    wrong = "permission under the Copyright and Similar Rights held by the"
    model = ScriptedModel([memory_step, wrong], repeat_last=True)
    record = await digest([doc], BZIP2, model=model, db=tmp_path / "loci.db", strategy="stream")
    assert record["answer"] == "Copyright: 1996-2010 Julian R Seward <jseward@bzip.org>"
    assert record["status"] == "done"
