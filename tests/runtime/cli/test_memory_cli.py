"""`loci memory` on the shell: the verbs the MCP tools have, and text that cannot drive the terminal.

The commands run in this process through `main(argv)` with their output
captured, on a real home in tmp_path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.runtime.cli.main import main
from tests.runtime.cli_helpers import script

HOSTILE = "berth \x1b[2J\x1b]0;pwned\x07 \x1b]52;c;aGVsbG8=\x07 owner \u202etxt.exe \x9b31m"


def loci_memory(capsys: pytest.CaptureFixture[str], db: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["memory", *argv, "--db", str(db)])
    out, err = capsys.readouterr()
    return code, out, err


def test_update_forget_and_link_work_as_the_tools_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "loci.db"
    loci_memory(capsys, db, "add", "berth 4 belongs to Ada")
    loci_memory(capsys, db, "add", "Ada pays 35 euros")
    code, out, _ = loci_memory(capsys, db, "link", "mem:1", "mem:2", "--weight", "0.8")
    assert code == 0 and out == "mem:1 -[related 0.8]-> mem:2  linked\n"
    code, out, _ = loci_memory(capsys, db, "update", "mem:1", "berth 5 belongs to Ada")
    assert code == 0 and out == "mem:1  updated: berth 5 belongs to Ada\n"
    code, out, _ = loci_memory(capsys, db, "show", "mem:1", "--json")
    shown = json.loads(out)
    assert shown["text"] == "berth 5 belongs to Ada" and shown["edges"][0]["dst"] == "mem:2"
    code, out, _ = loci_memory(capsys, db, "forget", "mem:2")
    assert code == 0 and out == "mem:2  forgotten\n"
    code, _, err = loci_memory(capsys, db, "show", "mem:2")
    assert code == 2 and "mem:2" in err and err.count("\n") == 1


def test_search_and_show_print_control_characters_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "loci.db"
    loci_memory(capsys, db, "add", HOSTILE)
    _, searched, _ = loci_memory(capsys, db, "search", "berth owner")
    _, shown, _ = loci_memory(capsys, db, "show", "mem:1")
    for out in (searched, shown):
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\x9b" not in out
        assert "\\x1b[2J" in out and "\\x1b]52;c;aGVsbG8=\\x07" in out and "\\u202e" in out and "\\x9b31m" in out
    _, as_json, _ = loci_memory(capsys, db, "show", "mem:1", "--json")
    assert json.loads(as_json)["text"] == HOSTILE  # --json keeps the exact text


def test_run_shows_evidence_escaped_and_says_how_to_give_feedback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "doc.txt"
    doc.write_text(f"line one\n{HOSTILE}\n", encoding="utf-8")
    model = script(
        tmp_path,
        [
            {"state": "", "tool": "context_read", "arguments": {"id": "doc:1"}},
            {"state": "", "answer": "read \x1b[2J", "evidence": [{"id": "doc:1", "start": 2, "end": 2}]},
        ],
    )
    code = main(["run", "read it", "--file", str(doc), "--model", model, "--db", str(tmp_path / "loci.db")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert out.startswith("read \\x1b[2J\n") and "\\x1b]52;c;aGVsbG8=\\x07" in out
    assert err.endswith("run 1: loci feedback 1 good|bad\n")


def test_projects_keep_memories_apart_and_all_projects_only_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "loci.db"
    loci_memory(capsys, db, "add", "the shop ships on Fridays", "--project", "shop")
    monkeypatch.setenv("LOCI_PROJECT", "blog")
    loci_memory(capsys, db, "add", "the blog ships a post on Fridays")
    code, out, _ = loci_memory(capsys, db, "search", "Fridays", "--json")
    assert code == 0 and [row["text"] for row in json.loads(out)] == ["the blog ships a post on Fridays"]
    code, out, _ = loci_memory(capsys, db, "search", "Fridays", "--project", "shop", "--json")
    assert [row["text"] for row in json.loads(out)] == ["the shop ships on Fridays"]
    code, _, err = loci_memory(capsys, db, "show", "mem:1")
    assert code == 2 and "no memory mem:1" in err
    code, out, _ = loci_memory(capsys, db, "search", "Fridays", "--all-projects", "--json")
    assert code == 0 and len(json.loads(out)) == 2
    code, _, err = loci_memory(capsys, db, "add", "where to?", "--all-projects")
    assert code == 2 and "name one project" in err
    code, _, err = loci_memory(capsys, db, "stats", "--project", "no good")
    assert code == 2 and "not a project name" in err
