"""Hooks for Claude Code: install into the settings, a simulated session captured, the next one recalls it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from loci.memory.errors import UsageError
from loci.memory.hooks.log import last_errors
from loci.runtime.cli.hooks import hook_report, install_project
from tests.runtime.cli_helpers import loci

FIXTURES = Path(__file__).parents[2] / "memory" / "imports" / "fixtures"
THEIRS = {"type": "command", "command": "echo theirs"}


def _settings(folder: Path) -> dict:
    return json.loads((folder / ".claude" / "settings.json").read_text(encoding="utf-8"))


def _run(command: str, event: dict) -> subprocess.CompletedProcess[str]:
    """Run a hook command as the client does: through the shell, the event's JSON on stdin."""
    return subprocess.run(command, shell=True, input=json.dumps(event), capture_output=True, text=True, timeout=120)


def _install(tmp_path: Path, db: Path) -> dict:
    project = tmp_path / "uploader"
    (project / ".claude").mkdir(parents=True)
    own = {"model": "opus", "hooks": {"Stop": [{"hooks": [THEIRS]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(own), encoding="utf-8")
    args = ("hooks", "install", "--client", "claude-code", "--scope", "project", "--dir", str(project))
    done = loci(*args, "--db", str(db), home=tmp_path)
    assert done.returncode == 0, done.stderr
    return _settings(project)


def test_install_merges_and_uninstall_takes_out_exactly_what_it_added(tmp_path: Path) -> None:
    settings = _install(tmp_path, tmp_path / "loci.db")
    assert settings["model"] == "opus"
    assert settings["hooks"]["Stop"][0] == {"hooks": [THEIRS]}
    assert set(settings["hooks"]) == {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"}
    assert "loci.memory.hooks recall --db" in settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    project = tmp_path / "uploader"
    again = loci("hooks", "install", "--scope", "project", "--dir", str(project), home=tmp_path)
    assert again.returncode == 0 and len(_settings(project)["hooks"]["SessionStart"]) == 1
    done = loci("hooks", "uninstall", "--scope", "project", "--dir", str(project), home=tmp_path)
    assert done.returncode == 0 and "removed 5" in done.stdout
    assert _settings(project) == {"model": "opus", "hooks": {"Stop": [{"hooks": [THEIRS]}]}}


def test_install_replaces_hooks_written_before_the_loci_import_name(tmp_path: Path) -> None:
    project = tmp_path / "uploader"
    (project / ".claude").mkdir(parents=True)
    old = {"type": "command", "command": "/usr/bin/python3 -P -m memory.hooks recall --db /x/loci.db", "timeout": 30}
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [old]}], "Stop": [{"hooks": [THEIRS]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    assert loci("hooks", "install", "--scope", "project", "--dir", str(project), home=tmp_path).returncode == 0
    commands = [hook["command"] for group in _settings(project)["hooks"]["UserPromptSubmit"] for hook in group["hooks"]]
    assert len(commands) == 1 and "-m loci.memory.hooks recall" in commands[0]


def test_a_captured_session_is_recalled_in_the_next(tmp_path: Path) -> None:
    db = tmp_path / "home" / "loci.db"
    hooks = _install(tmp_path, db)["hooks"]
    capture = hooks["Stop"][1]["hooks"][0]["command"]
    recall = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    transcript = tmp_path / "7f0c1d2e.jsonl"
    shutil.copy(FIXTURES / "claude_code.jsonl", transcript)
    session = {"session_id": "7f0c1d2e-3a4b-4c5d-8e6f-9a0b1c2d3e4f", "transcript_path": str(transcript)}
    session["cwd"] = "/home/ana/src/uploader"
    for event in ("Stop", "SessionEnd"):
        done = _run(capture, {**session, "hook_event_name": event})
        assert (done.returncode, done.stdout) == (0, "")
    assert last_errors(db) == {}
    following = {"session_id": "0b1c2d3e-next", "cwd": "/home/ana/src/uploader", "transcript_path": "x.jsonl"}
    prompt = {**following, "hook_event_name": "UserPromptSubmit", "prompt": "Why was the upload test flaky?"}
    done = _run(recall, prompt)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    assert "port 8080" in output["additionalContext"] and len(output["additionalContext"]) <= 1_300
    same_session = _run(recall, {**prompt, "session_id": session["session_id"]})
    assert "port 8080" not in same_session.stdout


def test_a_failing_hook_exits_0_and_logs_one_line_that_doctor_shows(tmp_path: Path) -> None:
    db = tmp_path / "home" / "loci.db"
    capture = _install(tmp_path, db)["hooks"]["PreCompact"][0]["hooks"][0]["command"]
    missing = {"session_id": "s", "transcript_path": str(tmp_path / "gone.jsonl"), "hook_event_name": "PreCompact"}
    done = _run(capture, missing)
    assert (done.returncode, done.stdout) == (0, "")
    broken = subprocess.run(capture, shell=True, input="not json", capture_output=True, text=True, timeout=120)
    assert broken.returncode == 0
    shown: list[str] = []
    errors = hook_report(db, shown.append)
    assert len(errors["capture"]) == 2 and "PreCompact: NotFoundError: no file at" in errors["capture"][0]
    assert shown[0].startswith("hook capture: last 2 errors")


def test_loci_hook_runs_the_same_hook_from_the_cli(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    imported = loci("memory", "import", str(FIXTURES / "claude_code.jsonl"), "--db", str(db), home=tmp_path)
    assert imported.returncode == 0, imported.stderr
    event = {"session_id": "other", "hook_event_name": "UserPromptSubmit", "prompt": "Why is the upload test flaky?"}
    done = loci("hook", "recall", "--db", str(db), home=tmp_path, stdin=json.dumps(event))
    assert done.returncode == 0 and "port 8080" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    broken = loci("hook", "capture", "--db", str(db), home=tmp_path, stdin="not json")
    assert (broken.returncode, broken.stdout) == (0, "")
    assert "JSONDecodeError" in last_errors(db)["capture"][0]


def test_a_project_install_names_the_folder_and_its_recall_stays_in_that_project(tmp_path: Path) -> None:
    db = tmp_path / "home" / "loci.db"
    hooks = _install(tmp_path, db)["hooks"]
    recall = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert recall.endswith("--project uploader")
    for project, fact in (("uploader", "the uploader retries on port 8080"), ("billing", "billing uses port 8080")):
        added = loci("memory", "add", fact, "--project", project, "--db", str(db), home=tmp_path)
        assert added.returncode == 0, added.stderr
    event = {"session_id": "s", "cwd": "/x/uploader", "hook_event_name": "UserPromptSubmit", "prompt": "port 8080?"}
    context = json.loads(_run(recall, event).stdout)["hookSpecificOutput"]["additionalContext"]
    assert "the uploader retries" in context and "billing" not in context


def test_the_installed_project_is_the_one_given_else_a_project_installs_folder_name() -> None:
    assert install_project("user", None, None) is None
    assert install_project("user", None, "shop") == "shop"
    assert install_project("project", Path("/src/My App (v2)"), None) == "My-App-v2"
    with pytest.raises(UsageError, match="not a project name"):
        install_project("project", None, "two words")
