"""`loci memory import FOLDER`: Codex's sessions folder imported whole, and a folder with a stranger in it refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.runtime.cli_helpers import loci

ROLLOUT = Path(__file__).parents[2] / "memory" / "imports" / "fixtures" / "codex_rollout.jsonl"
SESSION = "019cb655-7826-7080-b375-f4bd0ec83d54"
OTHER = "019cb700-1111-7222-8333-444455556666"


def _sessions(tmp_path: Path) -> Path:
    sessions = tmp_path / "codex" / "sessions"
    for day, session in (("04", SESSION), ("05", OTHER)):
        folder = sessions / "2026" / "03" / day
        folder.mkdir(parents=True)
        text = ROLLOUT.read_text(encoding="utf-8").replace(SESSION, session)
        (folder / f"rollout-2026-03-{day}T09-12-01-{session}.jsonl").write_text(text, encoding="utf-8")
    return sessions


def test_a_sessions_folder_imports_every_rollout_once(tmp_path: Path) -> None:
    sessions, db = _sessions(tmp_path), str(tmp_path / "loci.db")
    done = loci("memory", "import", str(sessions), "--db", db, "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    reports = json.loads(done.stdout)
    assert [(r["format"], r["added"]) for r in reports] == [("codex", 2), ("codex", 2)]
    assert [r["conversations"][0]["key"] for r in reports] == [f"codex:{SESSION}", f"codex:{OTHER}"]
    again = loci("memory", "import", str(sessions), "--db", db, "--json", home=tmp_path)
    assert [r["added"] for r in json.loads(again.stdout)] == [0, 0]


def test_a_folder_with_a_file_of_no_format_imports_nothing(tmp_path: Path) -> None:
    sessions, db = _sessions(tmp_path), str(tmp_path / "loci.db")
    shutil.copy(ROLLOUT, sessions / "2026" / "a-first.jsonl")
    (sessions / "notes.json").write_text('{"title": "not a conversation"}', encoding="utf-8")
    done = loci("memory", "import", str(sessions), "--db", db, home=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "notes.json: cannot tell its format" in done.stderr and "nothing was imported" in done.stderr
    stats = loci("memory", "stats", "--db", db, "--json", home=tmp_path)
    assert json.loads(stats.stdout)["nodes"] == 0
