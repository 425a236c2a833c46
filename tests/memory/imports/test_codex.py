"""A Codex session rollout, in its real shape, detected, imported, grown and imported again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError
from loci.memory.graph.graph import Graph
from loci.memory.imports.files import detect, import_file, read_conversations

ROLLOUT = Path(__file__).parent / "fixtures" / "codex_rollout.jsonl"
SESSION = "019cb655-7826-7080-b375-f4bd0ec83d54"


def _lines() -> list[dict]:
    return [json.loads(line) for line in ROLLOUT.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


async def _turn_texts(store: Store) -> list[str]:
    sql = "SELECT text FROM memory_nodes WHERE deleted IS NULL AND kind = 'semantic' ORDER BY id"
    return await store.read(lambda db: [row[0] for row in db.conn.execute(sql)])


def test_a_rollout_is_detected_as_codex() -> None:
    assert detect(ROLLOUT.read_text(encoding="utf-8"), str(ROLLOUT)) == "codex"


def test_what_was_said_is_read_from_the_events_without_the_injected_context() -> None:
    fmt, [conversation] = read_conversations(ROLLOUT)
    assert fmt == "codex" and conversation.key == f"codex:{SESSION}"
    assert [(t.speaker, t.text[:24]) for t in conversation.turns] == [
        ("User", "The upload test fails on"),
        ("Assistant", "The test binds the fixed"),
    ]
    assert {t.session for t in conversation.turns} == {SESSION}  # the whole id: UUIDv7 prefixes are shared
    assert conversation.turns[0].said is not None and conversation.turns[0].said.isoformat() == "2026-03-04"
    assert conversation.meta == {"session_id": SESSION, "cwd": "/home/ana/src/uploader", "client": "codex"}
    tools = [tool.text for tool in conversation.tools]
    assert len(tools) == 4
    assert "tool call exec_command (call_5pQx1)" in tools[0] and "sed -n 1,40p" in tools[0]
    assert "start_server(port=8080)" in tools[1]
    assert "tool call apply_patch (call_7Hk2n): *** Begin Patch" in tools[2]
    assert "Success. Updated" in tools[3]
    assert not any("AGENTS.md" in t.text or "environment_context" in t.text for t in conversation.turns)


def test_an_older_rollout_without_events_is_read_from_its_message_items(tmp_path: Path) -> None:
    older = _write(tmp_path / "rollout-old.jsonl", [r for r in _lines() if r["type"] != "event_msg"])
    _, [conversation] = read_conversations(older)
    assert [t.speaker for t in conversation.turns] == ["User", "Assistant"]
    assert conversation.turns[0].text.startswith("The upload test fails")


async def test_import_stores_turns_and_tools_and_again_adds_only_new_lines(store: Store, tmp_path: Path) -> None:
    graph, contexts = Graph(store), ContextStore(store)
    rollout = tmp_path / f"rollout-2026-03-04T09-12-01-{SESSION}.jsonl"
    shutil.copy(ROLLOUT, rollout)
    report = await import_file(graph, rollout, contexts=contexts)
    assert report.format == "codex" and report.added == 2
    [imported] = report.conversations
    assert imported.tools is not None and "call_5pQx1" in (await contexts.read(imported.tools)).text
    texts = await _turn_texts(store)
    assert texts[0] == "[4 March 2026] User: The upload test fails on CI about once in ten runs. Can you find out why?"
    assert (await import_file(graph, rollout, contexts=contexts)).added == 0
    more = {"timestamp": "2026-03-05T08:00:00.000Z", "type": "event_msg"}
    grown = [{**more, "payload": {"type": "user_message", "message": "Did port 0 fix the upload test for good?"}}]
    _write(rollout, _lines() + grown)
    again = await import_file(graph, rollout, contexts=contexts)
    assert (again.added, again.conversations[0].already) == (1, 2)
    assert (await _turn_texts(store))[-1].startswith("[5 March 2026] User: Did port 0 fix")


def test_a_rollout_line_without_any_date_is_an_error_naming_its_line(tmp_path: Path) -> None:
    records = [{k: v for k, v in r.items() if k != "timestamp"} for r in _lines()]
    records[0]["payload"].pop("timestamp")
    with pytest.raises(UsageError, match=r"rollout\.jsonl line 8: missing timestamp"):
        read_conversations(_write(tmp_path / "rollout.jsonl", records))
