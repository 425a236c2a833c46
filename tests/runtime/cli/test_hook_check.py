"""`loci doctor` tells the truth about hooks: installed but never run, a command that cannot start, the last run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[3]


def _loci(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "LOCI_HOME": str(home / ".loci"), "CODEX_HOME": str(home / ".codex")}
    env["PYTHONPATH"] = str(ROOT)
    command = [sys.executable, "-m", "loci.runtime.cli.main", *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=300, cwd=home, env=env)


def test_doctor_reports_installed_hooks_that_never_ran_then_when_they_ran(tmp_path: Path) -> None:
    db = tmp_path / ".loci" / "loci.db"
    installed = _loci(tmp_path, "hooks", "install", "--client", "codex", "--db", str(db))
    assert "type /hooks" in installed.stdout and "--dangerously-bypass-hook-trust" in installed.stdout
    again = _loci(tmp_path, "hooks", "install", "--client", "codex", "--db", str(db))
    assert "as they were" in again.stdout and "type /hooks" not in again.stdout  # nothing to trust again
    before = _loci(tmp_path, "doctor", "--db", str(db), "--json")
    hooks = json.loads(before.stdout)["hooks"]
    assert hooks["never_ran"] == ["capture", "recall"] and not hooks["failing"]
    command = json.loads((tmp_path / ".codex" / "hooks.json").read_text())["hooks"]["UserPromptSubmit"][0]
    event = {"hook_event_name": "UserPromptSubmit", "prompt": "anything", "session_id": "s", "turn_id": "t"}
    ran = subprocess.run(command["hooks"][0]["command"], shell=True, input=json.dumps(event), text=True, timeout=120)
    assert ran.returncode == 0
    after = json.loads(_loci(tmp_path, "doctor", "--db", str(db), "--json").stdout)["hooks"]
    assert after["never_ran"] == ["capture"] and "UserPromptSubmit: ok" in after["last_runs"]["recall"]


def test_doctor_reports_a_hook_command_that_exits_before_loci_runs(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    hook = {"type": "command", "command": "/nowhere/bin/loci hook recall", "timeout": 30}
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}}), encoding="utf-8")
    done = _loci(tmp_path, "doctor", "--db", str(tmp_path / ".loci" / "loci.db"))
    assert "this hook exits 127 before Loci runs: /nowhere/bin/loci hook recall" in done.stdout
    assert "hook recall: installed but never ran" in done.stdout
