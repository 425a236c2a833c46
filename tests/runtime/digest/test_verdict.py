"""`judge`: an answer is `done` only when it rests on its evidence and does not repeat itself."""

from __future__ import annotations

from loci.runtime.digest.verdict import cut_repeat, judge

QUESTION = "What is the vault access code?"
VAULT = "The vault access code is 7341."


def test_an_answer_read_on_its_evidence_is_done() -> None:
    verdict = judge(QUESTION, "7341", VAULT)
    assert (verdict.answer, verdict.status, verdict.reason) == ("7341", "done", None)


def test_evidence_without_the_questions_words_makes_the_answer_partial_and_names_them() -> None:
    fractions = "def __eq__(self, other):\n    # compare two Fractions for equality\n    return a == b"
    verdict = judge(QUESTION, "It is a special method that allows you to compare two Fractions.", fractions)
    assert verdict.status == "partial"
    assert "0 of the question's 3 content words (not: vault, access, code)" in verdict.reason


def test_an_answer_whose_own_words_are_not_in_its_evidence_is_partial() -> None:
    verdict = judge(QUESTION, "The fee is 12 euros a year.", VAULT)
    assert verdict.status == "partial" and "not read there" in verdict.reason


def test_an_answer_that_repeats_itself_is_cut_at_the_first_repeat_and_partial() -> None:
    verdict = judge(QUESTION, " ".join([VAULT] * 5), VAULT)
    assert verdict.answer == VAULT and verdict.status == "partial" and "repeats itself" in verdict.reason
    looping = "the code the code is 7341 and the code is 7341 and the code is 7341 and the code is 7341 and"
    text, repeated = cut_repeat(looping)
    assert repeated and len(text) < len(looping) and text.startswith("the code the code is 7341")


def test_an_answer_that_says_the_document_does_not_say_is_partial() -> None:
    verdict = judge(QUESTION, "The document does not say.", VAULT)
    assert verdict.status == "partial" and "does not say" in verdict.reason


def test_a_question_about_the_whole_is_not_held_to_its_words() -> None:
    evidence = "gate 1 opened\ngate 2 opened\nthree gates"
    verdict = judge("Summarise the log.", "Three gates were opened.", evidence, lookup=False)
    assert verdict.status == "done"
    assert judge("Summarise the log.", "Three gates", "gate", lookup=True).status == "partial"


def test_an_invented_detail_beside_the_right_name_is_partial() -> None:
    evidence = "This package was put together by Matthias Klose <doko@debian.org>."
    question = "Who put together the Debian bash package?"
    assert judge(question, "Matthias Klose", evidence).status == "done"
    verdict = judge(question, "Matthias Klose, a Linux kernel engineer at Intel.", evidence)
    assert verdict.status == "partial" and "'Linux'" in (verdict.reason or "") and "'Intel'" in (verdict.reason or "")
