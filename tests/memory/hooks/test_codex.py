"""Which transcript a capture reads: Claude Code's path, Codex's rollout, or Codex's rollout found by session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.memory.errors import UsageError
from loci.memory.hooks.codex import find_rollout, is_codex_event, transcript_of

EVENTS = json.loads((Path(__file__).parent / "fixtures" / "codex_events.json").read_text(encoding="utf-8"))
SESSION = EVENTS["Stop"]["session_id"]


def _rollout(home: Path) -> Path:
    day = home / "sessions" / "2026" / "03" / "04"
    day.mkdir(parents=True)
    path = day / f"rollout-2026-03-04T09-12-01-{SESSION}.jsonl"
    path.write_text("{}\n", encoding="utf-8")
    return path


def test_codex_events_of_a_turn_name_it_and_claude_codes_do_not() -> None:
    assert all(is_codex_event(EVENTS[name]) for name in ("UserPromptSubmit", "Stop", "PreCompact"))
    assert not is_codex_event({"session_id": "s", "transcript_path": "t.jsonl", "hook_event_name": "Stop"})


def test_a_codex_stop_reads_its_rollout_and_a_claude_code_stop_its_transcript(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    assert transcript_of({**EVENTS["Stop"], "transcript_path": str(rollout)}) == (rollout, "codex")
    claude = {"session_id": "s", "transcript_path": str(tmp_path / "s.jsonl"), "hook_event_name": "Stop"}
    assert transcript_of(claude) == (tmp_path / "s.jsonl", "claude-code")


def test_without_a_transcript_path_the_rollout_is_found_by_session_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    event = {**EVENTS["PreCompact"], "transcript_path": None}
    with pytest.raises(UsageError, match="no rollout of session"):
        transcript_of(event)
    path = _rollout(tmp_path / "codex")
    assert transcript_of(event) == (path, "codex")
    assert find_rollout("*", tmp_path / "codex") is None
