"""Conversation files: recognised by layout, read into turns, loaded one turn a line."""

from __future__ import annotations

import json
from pathlib import Path

from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.imports.transcript import conversation_document, parse_transcript, render_turns

TEXT = """[8 May 2023] Caroline: I went to a support group yesterday.
[8 May 2023] Melanie: That sounds powerful!
[20 May 2023] Caroline: Last Saturday I painted a lake.
"""


def test_the_text_layout_is_read_by_turns_speakers_sessions_and_days() -> None:
    transcript = parse_transcript(TEXT)
    assert transcript is not None and transcript.layout == "text"
    assert [t.speaker for t in transcript.turns] == ["Caroline", "Melanie", "Caroline"]
    assert [t.session for t in transcript.turns] == ["1", "1", "2"]
    assert transcript.turns[2].said is not None and transcript.turns[2].said.isoformat() == "2023-05-20"


def test_relative_dates_resolve_against_the_day_a_turn_was_said() -> None:
    transcript = parse_transcript(TEXT)
    assert transcript is not None
    lines = render_turns(transcript.turns).split("\n")
    assert lines[0] == "[8 May 2023] Caroline: I went to a support group yesterday. (yesterday = 7 May 2023)"
    assert "(Last Saturday = 13 May 2023)" in lines[2]


def test_jsonl_messages_and_locomo_json_are_conversations_too() -> None:
    jsonl = "\n".join(
        json.dumps({"role": role, "content": text, "timestamp": "2024-03-01T10:00:00"})
        for role, text in [("user", "Where is my bike?"), ("assistant", "In the shed.")]
    )
    found = parse_transcript(jsonl)
    assert found is not None and found.layout == "jsonl" and found.speakers == ["user", "assistant"]
    sample = {
        "conversation": {
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "A", "text": "hi", "dia_id": "D1:1"}, {"speaker": "B", "text": "yo"}],
        }
    }
    locomo = parse_transcript(json.dumps(sample))
    assert locomo is not None and locomo.layout == "locomo" and locomo.turns[0].ref == "D1:1"


def test_prose_code_and_plain_json_are_not_conversations() -> None:
    assert parse_transcript("Notes: one.\nTodo: two.\n") is None
    assert parse_transcript('{"name": "x", "version": 2}') is None
    assert parse_transcript('[{"a": 1}]') is None
    assert parse_transcript("[8 May 2023] Caroline: only one turn\n") is None


async def test_a_conversation_file_is_loaded_one_turn_a_line(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "chat.txt"
    path.write_text("\n" + TEXT + "\n\n")
    contexts = ContextStore(store, conversations=conversation_document)
    obj = await contexts.add_file(path)
    assert obj.lines == 3 and obj.meta["format"] == "conversation" and obj.meta["sessions"] == 2
    assert obj.meta["speakers"] == ["Caroline", "Melanie"]
    span = await contexts.read(obj.id, 2, 2)
    assert span.text.strip() == "[8 May 2023] Melanie: That sounds powerful!"
    hits = await contexts.search("yesterday 7 May", ids=[obj.id])
    assert hits and hits[0].line == 1
