"""The real-file set of the qa benchmark: facts in several phrasings on files of Python and Debian, and its scoring."""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from loci.bench.qa import qa
from loci.bench.qa.beam import beam_set
from loci.bench.qa.files import run_files
from loci.bench.qa.files_data import FILES, KINDS, STYLES, file_set, kind_of, spread
from loci.bench.qa.files_report import is_right
from loci.memory.errors import UsageError
from loci.runtime.loop.records import RunConfig
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel


def _shipped() -> list[dict[str, str]]:
    return json.loads(FILES.read_text(encoding="utf-8"))["facts"]


def test_the_shipped_set_has_enough_facts_files_kinds_and_phrasings() -> None:
    facts = _shipped()
    assert len(facts) >= 60
    assert len({fact["file"] for fact in facts}) >= 30
    kinds = {kind_of(fact["file"]) for fact in facts}
    assert kinds == set(KINDS)  # modules, copyright files, licences, man pages, changelogs and READMEs
    for fact in facts:
        asked = [fact[style] for style in STYLES] + fact.get("more", [])
        assert len(set(asked)) >= 3 and all(q.strip() for q in asked), fact["answer"]
    assert len({(fact["file"], fact["answer"]) for fact in facts}) == len(facts)


def test_every_expected_span_is_on_one_line_of_its_file_where_the_file_is_here(tmp_path: Path) -> None:
    questions, skipped = file_set(FILES, tmp_path)
    seen = {q.fact for q in questions}
    assert len(seen) + len(skipped) == len(_shipped())
    for number in seen:
        q = next(q for q in questions if q.fact == number)
        assert any(is_right(line, q.answer) for line in q.lines), (q.file, q.answer)  # as an answer would
    if shutil.which("man") and Path("/usr/share/man/man1/ls.1.gz").is_file():  # Debian's base system has both
        assert any(q.kind == "man" for q in questions), skipped


def test_a_fact_whose_file_is_missing_is_skipped_with_the_reason(tmp_path: Path) -> None:
    there = tmp_path / "there.txt"
    there.write_text("SMTP_PORT = 25\n", encoding="utf-8")
    packed = tmp_path / "changelog.gz"
    packed.write_bytes(gzip.compress(b"pkg (1.2) unstable\n -- Ann Maintainer  Mon, 01 Jan 2024\n"))
    facts = [
        {"file": str(there), "answer": "25", "name": "What is SMTP_PORT?", "plain": "Mail port?", "casual": "port?"},
        {"file": str(tmp_path / "gone.txt"), "answer": "x", "name": "What is gone?"},
        {"file": str(packed), "answer": "Ann Maintainer", "name": "Who?", "more": ["Who uploaded it?"]},
        {"file": "man:no-such-page-anywhere", "answer": "-x", "name": "Which option?"},
    ]
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"facts": facts}), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    questions, skipped = file_set(path, out)
    assert [(q.answer, q.style, q.fact) for q in questions] == [
        ("25", "name", 0),
        ("25", "plain", 0),
        ("25", "casual", 0),
        ("Ann Maintainer", "name", 2),
        ("Ann Maintainer", "more", 2),
    ]
    assert questions[3].lines[1].endswith("Mon, 01 Jan 2024") and questions[3].kind == "doc"
    assert len(skipped) == 2 and "gone.txt" in skipped[0] and "no-such-page-anywhere" in skipped[1]
    path.write_text(json.dumps({"questions": []}), encoding="utf-8")
    with pytest.raises(UsageError, match="not a fact file"):
        file_set(path, out)


def test_a_man_page_is_skipped_with_the_reason_when_man_is_not_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = [{"file": "man:ls", "answer": "-S", "name": "Which ls option sorts by size?"}]
    (tmp_path / "set.json").write_text(json.dumps({"facts": facts}), encoding="utf-8")
    monkeypatch.setenv("PATH", str(tmp_path))  # a machine without `man`
    questions, skipped = file_set(tmp_path / "set.json", tmp_path)
    assert not questions and skipped == ["'-S' (man:ls): `man` is not installed"]


def test_python_modules_are_found_where_this_python_keeps_its_standard_library(tmp_path: Path) -> None:
    facts = [{"file": "{stdlib}/argparse.py", "answer": "Steven J. Bethard", "name": "Who wrote argparse?"}]
    (tmp_path / "set.json").write_text(json.dumps({"facts": facts}), encoding="utf-8")
    [q], skipped = file_set(tmp_path / "set.json")
    assert q.file == Path(sysconfig.get_paths()["stdlib"]) / "argparse.py" and not skipped and q.kind == "module"
    assert all("{stdlib}" in row["file"] or not row["file"].endswith(".py") for row in _shipped())


def test_an_option_is_right_only_as_that_exact_token() -> None:
    assert is_right("Use `ls -S`.", "-S") and is_right("-S", "-S")
    assert not is_right("ls -s", "-S") and not is_right("ls -Sr", "-S") and not is_right("I think so", "-i")
    assert is_right("The format %j.", "%j") and not is_right("j", "%j")
    assert is_right("It is 64 * 1024 bytes", "64 * 1024") and not is_right("27", "2")


async def test_every_phrasing_is_scored_and_each_fact_by_its_worst_phrasing(tmp_path: Path) -> None:
    path = tmp_path / "smtplib.py"
    # prose, not lines shaped for a value (`SMTP_PORT = 25`), whose span Loci would answer with: the model writes
    path.write_text("# The Dragon De Monsyne wrote it.\n# SMTP_PORT is 25, SMTP_SSL_PORT 465.\n", encoding="utf-8")
    facts = [
        {"file": str(path), "answer": "25", "name": "What is SMTP_PORT?", "plain": "Mail port?", "casual": "port?"},
        {"file": str(path), "answer": "The Dragon De Monsyne", "name": "Author?", "plain": "Who wrote it?"},
    ]
    (tmp_path / "set.json").write_text(json.dumps({"facts": facts}), encoding="utf-8")
    questions, _ = file_set(tmp_path / "set.json")
    plain = {"Mail port?", "Who wrote it?"}

    def reply(request: Request) -> dict[str, Any] | str:
        question = request.messages[-1]["content"]
        if request.purpose == "direct":  # rag: right but for the plain phrasing of the port
            return "It is 465." if "Mail port?" in question else "The port is 25, by The Dragon De Monsyne."
        return "It is 465." if any(q in str(request.messages) for q in plain) else "25, The Dragon De Monsyne"

    model = ScriptedModel([reply], repeat_last=True, parameters=135_000_000, context_window=4_096)
    report = await run_files(model, questions, RunConfig())
    assert (report["files_n"], report["files_facts"], report["files_files"]) == (5, 2, 1)
    assert (report["files_rag_right"], report["files_rag_acc"]) == (4, 0.8)
    assert (report["files_rag_facts_all_right"], report["files_rag_facts_all_right_share"]) == (1, 0.5)
    assert report["files_rag_by_style"] == {"name": 1.0, "plain": 0.5, "casual": 1.0}
    assert report["files_rag_worst_style"] == "plain"
    loci = [a for a in report["files_answers"] if a["arm"] == "loci"]
    assert len(loci) == 5 and report["files_loci_right"] == sum(a["right"] for a in loci)
    done_wrong = sum(a["status"] == "done" and not a["right"] for a in loci)
    right_partial = sum(a["status"] == "partial" and a["right"] for a in loci)
    assert done_wrong >= 1  # 465 is on a line shown: grounded, and wrong
    assert (report["files_loci_done_wrong"], report["files_loci_done_wrong_share"]) == (done_wrong, done_wrong / 5)
    assert (report["files_loci_right_partial"], report["files_loci_right_partial_share"]) == (
        right_partial,
        right_partial / 5,
    )
    assert report["files_loci_by_kind"]["doc"]["facts"] == 2 and report["files_kinds"] == {"doc": 2}
    port = next(entry for entry in report["files_facts_detail"] if entry["answer"] == "25")
    assert (port["rag"], port["rag_wrong"]) == ("2/3", ["plain"])
    assert "files_loci_rag_s_ratio" in report and len(report["files_answers"]) == 10
    with pytest.raises(UsageError, match="unknown arms"):
        await run_files(model, questions, RunConfig(), ["loci", "oracle"])


def test_a_subset_keeps_every_kind_and_every_phrasing_of_its_facts(tmp_path: Path) -> None:
    questions, _ = file_set(FILES, tmp_path)
    subset = spread(questions, 5)
    assert len({q.fact for q in subset}) == 5
    assert {q.kind for q in subset} == {q.kind for q in questions}
    assert all(sum(p.fact == q.fact for p in subset) == sum(p.fact == q.fact for p in questions) for q in subset)


def test_the_beam_set_keeps_questions_whose_rubric_states_one_short_value(tmp_path: Path) -> None:
    folder = tmp_path / "1" / "probing_questions"
    folder.mkdir(parents=True)
    turns = [
        [
            {"role": "user", "content": "My parents live\n12 miles away. ->-> 1,26"},
            {"role": "assistant", "content": "Ok."},
        ]
    ]
    (tmp_path / "1" / "chat.json").write_text(json.dumps([{"turns": turns}]), encoding="utf-8")
    probes = {
        "information_extraction": [
            {"question": "How far away do my parents live?", "rubric": ["LLM response should state: 12 miles away"]},
            {"question": "Two values?", "rubric": ["LLM response should state: a", "LLM response should state: b"]},
            {"question": "Long?", "rubric": ["LLM response should state: a value of many more words than four"]},
        ]
    }
    (folder / "probing_questions.json").write_text(json.dumps(probes), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    [q] = beam_set(tmp_path, [1], out)
    assert (q.question, q.answer) == ("How far away do my parents live?", "12 miles away")
    assert q.lines == ("user: My parents live 12 miles away.", "assistant: Ok.")
    with pytest.raises(UsageError, match="not a BEAM chat"):
        beam_set(tmp_path, [2], out)


async def test_the_cli_runs_the_set_on_the_arms_named_and_refuses_a_subset_of_no_facts(tmp_path: Path) -> None:
    there = tmp_path / "there.txt"
    there.write_text("SMTP_PORT = 25\n", encoding="utf-8")
    facts = [{"file": str(there), "answer": "25", "name": "What is SMTP_PORT?"}]
    (tmp_path / "set.json").write_text(json.dumps({"facts": facts}), encoding="utf-8")
    (tmp_path / "script.json").write_text(json.dumps(["It is 25."]), encoding="utf-8")
    parser = argparse.ArgumentParser()
    qa.add_arguments(parser)
    common = ["--files", str(tmp_path / "set.json"), "--model", f"scripted:{tmp_path / 'script.json'}"]
    report = await qa.run(parser.parse_args([*common, "--arms", "rag"]))
    assert (report["files_rag_right"], report["files_skipped"]) == (1, []) and "files_loci_acc" not in report
    (tmp_path / "script.json").write_text("[]", encoding="utf-8")  # refused before a question is asked
    with pytest.raises(UsageError, match="--files-facts must be a positive number"):
        await qa.run(parser.parse_args([*common, "--files-facts", "0"]))
