"""The real-file set of the qa benchmark: questions that point at files, skipped with a reason when missing."""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from bench.qa_beam import beam_set
from bench.qa_files import FILES, file_set, run_files
from memory.errors import UsageError
from runtime.loop.records import RunConfig
from runtime.models.base import Request
from runtime.models.scripted import ScriptedModel


def test_every_shipped_answer_is_a_span_of_one_line_of_its_file() -> None:
    questions, skipped = file_set(FILES)
    assert len(questions) + len(skipped) >= 30
    for q in questions:
        assert sum(q.answer in line for line in q.lines) >= 1, q.question


def test_a_question_whose_file_is_missing_is_skipped_with_the_reason(tmp_path: Path) -> None:
    there = tmp_path / "there.txt"
    there.write_text("SMTP_PORT = 25\n", encoding="utf-8")
    rows = [
        {"file": str(there), "question": "What is SMTP_PORT?", "answer": "25"},
        {"file": str(tmp_path / "gone.txt"), "question": "What is gone?", "answer": "x"},
    ]
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"questions": rows}), encoding="utf-8")
    questions, skipped = file_set(path)
    assert [q.answer for q in questions] == ["25"] and len(skipped) == 1 and "gone.txt" in skipped[0]
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(UsageError, match="not a question file"):
        file_set(path)


def test_python_modules_are_found_where_this_python_keeps_its_standard_library(tmp_path: Path) -> None:
    rows = [{"file": "{stdlib}/argparse.py", "question": "Who wrote argparse?", "answer": "Steven J. Bethard"}]
    (tmp_path / "set.json").write_text(json.dumps({"questions": rows}), encoding="utf-8")
    [q], skipped = file_set(tmp_path / "set.json")
    assert q.file == Path(sysconfig.get_paths()["stdlib"]) / "argparse.py" and not skipped
    assert all("{stdlib}" in row["file"] or not row["file"].endswith(".py") for row in _shipped())


def _shipped() -> list[dict[str, str]]:
    return json.loads(FILES.read_text(encoding="utf-8"))["questions"]


async def test_the_arms_are_scored_and_a_wrong_done_answer_is_counted(tmp_path: Path) -> None:
    path = tmp_path / "smtplib.py"
    path.write_text("# Author: The Dragon De Monsyne\nSMTP_PORT = 25\nSMTP_SSL_PORT = 465\n", encoding="utf-8")
    rows = [{"file": str(path), "question": "What is the default SMTP port?", "answer": "25"}]
    (tmp_path / "set.json").write_text(json.dumps({"questions": rows}), encoding="utf-8")
    questions, _ = file_set(tmp_path / "set.json")

    def reply(request: Request) -> dict[str, Any] | str:
        return "It is 465." if request.purpose == "answer" else "The port is 25."

    model = ScriptedModel([reply], repeat_last=True, parameters=135_000_000, context_window=4_096)
    report = await run_files(model, questions, RunConfig(), ["loci", "rag"])
    assert (report["files_rag_right"], report["files_loci_right"]) == (1, 0)
    assert report["files_loci_done_wrong"] == 1  # 465 is on a line shown: grounded, and wrong
    with pytest.raises(UsageError, match="unknown arms"):
        await run_files(model, questions, RunConfig(), ["loci", "oracle"])


def test_the_beam_set_keeps_questions_whose_rubric_states_one_short_value(tmp_path: Path) -> None:
    folder = tmp_path / "1" / "probing_questions"
    folder.mkdir(parents=True)
    turns = [[{"role": "user", "content": "My parents live\n12 miles away."}, {"role": "assistant", "content": "Ok."}]]
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
