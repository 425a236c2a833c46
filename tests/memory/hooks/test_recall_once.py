"""What recall injects into a session: never the session's own turns (told by the whole id), never a fact twice.

Codex's session ids are UUIDv7: two sessions started within 65 s share their
first 8 characters, which were once the label recall left out. Each test
captures a real rollout (the fixture, its id rewritten) into a real SQLite
home and runs the recall hook as the client does, in-process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph
from loci.memory.hooks.capture import hook_capture
from loci.memory.hooks.recall import hook_recall

ROLLOUT = Path(__file__).parents[1] / "imports" / "fixtures" / "codex_rollout.jsonl"
FIXTURE_ID = "019cb655-7826-7080-b375-f4bd0ec83d54"
FIRST = "019cb655-7826-7080-b375-f4bd0ec83d54"
SECOND = "019cb655-9b02-7e11-a001-3c5d7e9f1b20"  # started ~9 s later: the same first 8 characters


def _rollout(tmp_path: Path, session: str) -> Path:
    path = tmp_path / f"rollout-2026-03-04T09-12-01-{session}.jsonl"
    path.write_text(ROLLOUT.read_text(encoding="utf-8").replace(FIXTURE_ID, session), encoding="utf-8")
    return path


def _capture(db: Path, rollout: Path, session: str) -> None:
    event = {"hook_event_name": "Stop", "session_id": session, "turn_id": "t", "transcript_path": str(rollout)}
    anyio.run(hook_capture, db, event)


def _recall(db: Path, **event: Any) -> str:
    out = hook_recall(db, {"hook_event_name": "UserPromptSubmit", **event})
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


def _ids(context: str) -> list[str]:
    return [line.split("]")[0].removeprefix("- [") for line in context.splitlines() if line.startswith("- [mem:")]


def test_a_second_codex_session_started_seconds_later_recalls_the_firsts_turns(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    assert FIRST[:8] == SECOND[:8]
    _capture(db, _rollout(tmp_path, FIRST), FIRST)
    prompt = "why does the upload test fail on the port?"
    assert "upload test" in _recall(db, session_id=SECOND, prompt=prompt)
    assert _recall(db, session_id=FIRST, prompt=prompt) == ""  # its own turns: the model has them


def test_two_sessions_episodes_have_names_that_tell_them_apart(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    for session in (FIRST, SECOND):
        _capture(db, _rollout(tmp_path, session), session)

    async def episodes() -> list[str]:
        async with await Store.open(db) as store:
            sql = "SELECT text FROM memory_nodes WHERE kind = 'episodic' AND deleted IS NULL"
            return await store.read(lambda d: [row[0].split(":")[0] for row in d.conn.execute(sql)])

    names = anyio.run(episodes)
    assert len(names) == 2 and len(set(names)) == 2, names


def test_session_start_notes_are_not_repeated_by_the_first_prompt(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"

    async def remember() -> None:
        async with await Store.open(db) as store:
            await Graph(store).remember("The staging server of harbor listens on port 7070.", "semantic", None, [])

    anyio.run(remember)
    folder = str(tmp_path / "harbor")
    started = _recall(db, hook_event_name="SessionStart", source="startup", session_id="s1", cwd=folder)
    assert "port 7070" in started
    assert _recall(db, session_id="s1", cwd=folder, prompt="which port does staging of harbor use?") == ""
    # Another session, and the same one after compaction (its context lost), are told again.
    assert "port 7070" in _recall(db, session_id="s2", cwd=folder, prompt="which port does staging use?")
    again = _recall(db, hook_event_name="SessionStart", source="compact", session_id="s1", cwd=folder)
    assert "port 7070" in again


def test_an_episode_and_its_own_turns_never_both_take_room(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    _capture(db, _rollout(tmp_path, FIRST), FIRST)
    context = _recall(db, session_id="other", prompt="upload test fails port fixed binds")
    lines = [line for line in context.splitlines() if line.startswith("- [mem:")]
    episodes = [line for line in lines if "Conversation session" in line]
    assert lines and (not episodes or len(lines) == len(episodes)), context
    assert len(_ids(context)) == len(set(_ids(context)))
