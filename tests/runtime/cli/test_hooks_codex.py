"""Hooks for Codex: install into its hooks.json, a session's rollout captured at Stop, the next session recalls it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from loci.memory.hooks.log import last_errors
from tests.runtime.cli_helpers import loci

ROOT = Path(__file__).parents[2]
ROLLOUT = ROOT / "memory" / "imports" / "fixtures" / "codex_rollout.jsonl"
EVENTS = json.loads((ROOT / "memory" / "hooks" / "fixtures" / "codex_events.json").read_text(encoding="utf-8"))
THEIRS = {"type": "command", "command": "python3 ~/.codex/hooks/notify.py", "timeout": 5}
OWN = {"hooks": {"Stop": [{"hooks": [THEIRS]}], "PreToolUse": [{"matcher": "Bash", "hooks": [THEIRS]}]}}


def _hooks(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _run(command: str, event: dict) -> subprocess.CompletedProcess[str]:
    """Run a hook command as Codex does: through the shell, the event's JSON on stdin."""
    return subprocess.run(command, shell=True, input=json.dumps(event), capture_output=True, text=True, timeout=120)


def _install(tmp_path: Path, db: Path) -> dict:
    project = tmp_path / "uploader"
    (project / ".codex").mkdir(parents=True)
    (project / ".codex" / "hooks.json").write_text(json.dumps(OWN), encoding="utf-8")
    args = ("hooks", "install", "--client", "codex", "--scope", "project", "--dir", str(project), "--db", str(db))
    done = loci(*args, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "trust" in done.stdout
    return _hooks(project / ".codex" / "hooks.json")["hooks"]


def test_install_keeps_their_hooks_and_uninstall_takes_out_exactly_what_it_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = tmp_path / "codex-home"
    codex.mkdir()
    (codex / "hooks.json").write_text(json.dumps(OWN), encoding="utf-8")
    monkeypatch.setenv("CODEX_HOME", str(codex))
    done = loci("hooks", "install", "--client", "codex", home=tmp_path)
    assert done.returncode == 0, done.stderr
    hooks = _hooks(codex / "hooks.json")["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "PreToolUse"}
    assert (
        hooks["Stop"][0] == {"hooks": [THEIRS]}
        and "loci.memory.hooks capture" in hooks["Stop"][1]["hooks"][0]["command"]
    )
    assert "loci.memory.hooks recall" in hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    again = loci("hooks", "install", "--client", "codex", home=tmp_path)
    assert again.returncode == 0 and len(_hooks(codex / "hooks.json")["hooks"]["Stop"]) == 2
    removed = loci("hooks", "uninstall", "--client", "codex", home=tmp_path)
    assert removed.returncode == 0 and "removed 4" in removed.stdout
    assert _hooks(codex / "hooks.json") == OWN
    assert not (tmp_path / ".claude").exists()


def test_a_hooks_file_made_by_install_is_gone_after_uninstall(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    args = ("--client", "codex", "--scope", "project", "--dir", str(project))
    assert loci("hooks", "install", *args, home=tmp_path).returncode == 0
    assert (project / ".codex" / "hooks.json").exists()
    done = loci("hooks", "uninstall", *args, home=tmp_path)
    assert done.returncode == 0 and "removed 4" in done.stdout
    assert not (project / ".codex" / "hooks.json").exists()


def test_a_captured_codex_session_is_recalled_in_the_next(tmp_path: Path) -> None:
    db = tmp_path / "home" / "loci.db"
    hooks = _install(tmp_path, db)
    capture = hooks["Stop"][1]["hooks"][0]["command"]
    recall = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    rollout = tmp_path / f"rollout-2026-03-04T09-12-01-{EVENTS['Stop']['session_id']}.jsonl"
    shutil.copy(ROLLOUT, rollout)
    for name in ("Stop", "PreCompact"):
        done = _run(capture, {**EVENTS[name], "transcript_path": str(rollout)})
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert last_errors(db) == {}
    following = {**EVENTS["UserPromptSubmit"], "session_id": "019cb700-0000-7000-8000-000000000001"}
    done = _run(recall, following)
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    assert "port 8080" in output["additionalContext"] and len(output["additionalContext"]) <= 1_300
    started = json.loads(_run(recall, {**EVENTS["SessionStart"], "session_id": following["session_id"]}).stdout)
    assert started["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "port 8080" not in _run(recall, EVENTS["UserPromptSubmit"]).stdout


def test_a_projects_own_memory_package_does_not_shadow_the_hooks(tmp_path: Path) -> None:
    db = tmp_path / "home" / "loci.db"
    capture = _install(tmp_path, db)["Stop"][1]["hooks"][0]["command"]
    project = tmp_path / "uploader"
    (project / "memory").mkdir()
    (project / "memory" / "__init__.py").write_text("raise ImportError('the project's own memory package')\n")
    rollout = tmp_path / "rollout.jsonl"
    shutil.copy(ROLLOUT, rollout)
    event = json.dumps({**EVENTS["Stop"], "transcript_path": str(rollout)})
    done = subprocess.run(capture, shell=True, input=event, capture_output=True, text=True, timeout=120, cwd=project)
    assert (done.returncode, done.stderr) == (0, "") and last_errors(db) == {}


def test_a_codex_stop_without_a_rollout_exits_0_and_logs_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "no-codex"))
    db = tmp_path / "home" / "loci.db"
    capture = _install(tmp_path, db)["Stop"][1]["hooks"][0]["command"]
    done = _run(capture, {**EVENTS["Stop"], "transcript_path": None})
    assert (done.returncode, done.stdout) == (0, "")
    assert "Stop: UsageError: no transcript_path and no rollout of session" in last_errors(db)["capture"][0]
