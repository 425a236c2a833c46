"""`loci memory update|forget --reason`, a history a person can read line by line, and hits that name their project."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from loci.runtime.cli.main import main

LONG = "The staging cluster is called heron, after the bird on the team's mug, and it runs in the Frankfurt region"


def loci_memory(capsys: pytest.CaptureFixture[str], db: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["memory", *argv, "--db", str(db)])
    out, err = capsys.readouterr()
    return code, out, err


def test_update_and_forget_keep_their_reasons_in_the_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "loci.db"
    loci_memory(capsys, db, "add", "The staging cluster is called egret")
    code, _, err = loci_memory(capsys, db, "update", "mem:1", LONG, "--reason", "renamed in March")
    assert code == 0, err
    code, _, err = loci_memory(capsys, db, "forget", "mem:1", "--reason", "staging was shut down")
    assert code == 0, err
    _, out, _ = loci_memory(capsys, db, "history", "mem:1")
    assert "until replaced because renamed in March" in out and "forgotten because staging was shut down" in out
    update = next(line for line in out.splitlines() if " update " in line)
    assert json.dumps(LONG) in update and update.endswith("<- tool:memory_update")
    _, as_json, _ = loci_memory(capsys, db, "history", "mem:1", "--json")
    events = json.loads(as_json)["events"]
    assert [e["op"] for e in events][-2:] == ["update", "delete"]
    assert events[-2]["after"]["text"] == LONG and events[-2]["after"].get("reason") == "renamed in March"


def test_a_history_line_says_when_in_utc_and_shows_each_change_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "loci.db"
    loci_memory(capsys, db, "add", "egret")
    loci_memory(capsys, db, "update", "mem:1", LONG)
    _, out, _ = loci_memory(capsys, db, "history", "mem:1")
    lines = [line for line in out.splitlines() if line.startswith("  #")]
    assert re.match(r"  #1 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  add ", lines[0])
    assert f'text: "egret" -> {json.dumps(LONG)}' in lines[1]


def test_a_search_over_every_project_names_each_hits_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "loci.db"
    loci_memory(capsys, db, "add", "the shop ships on Fridays", "--project", "shop")
    loci_memory(capsys, db, "add", "the blog ships a post on Fridays", "--project", "blog")
    _, out, _ = loci_memory(capsys, db, "search", "Fridays", "--all-projects", "--json")
    assert sorted((row["project"], row["text"][:8]) for row in json.loads(out)) == [
        ("blog", "the blog"),
        ("shop", "the shop"),
    ]
    _, out, _ = loci_memory(capsys, db, "search", "Fridays", "--all-projects")
    assert {line.split()[1] for line in out.splitlines()} == {"shop", "blog"}
    _, out, _ = loci_memory(capsys, db, "search", "Fridays", "--project", "shop", "--json")
    assert "project" not in json.loads(out)[0]
