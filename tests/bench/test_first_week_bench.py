"""The first-week benchmark's pieces: its chats' files and answers, the megabyte it digests, the imported turns."""

from __future__ import annotations

import json
from pathlib import Path

from loci.bench.first_week.files import DATA, _path, concatenated, run_chats
from loci.bench.first_week.first_week import _locomo
from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph
from loci.memory.imports.files import import_file
from loci.runtime.loop.records import RunConfig
from loci.runtime.models.scripted import ScriptedModel

PLAN = json.loads(DATA.read_text(encoding="utf-8"))


def test_each_chat_is_five_turns_on_a_real_file_with_follow_ups() -> None:
    assert len(PLAN["chats"]) == 4
    for chat in PLAN["chats"]:
        assert _path(chat["file"]).is_file() and len(chat["turns"]) == 5
    follow_ups = [q for chat in PLAN["chats"] for q, _ in chat["turns"] if q in ("Double it.", "What is half of that?")]
    assert len(follow_ups) >= 3


def test_the_digested_file_is_a_megabyte_of_copyright_files_with_the_asked_ones_first(tmp_path: Path) -> None:
    plan = PLAN["digest"]
    path = concatenated(tmp_path / "c.txt", plan["first"], plan["bytes"])
    text = path.read_text(encoding="utf-8")
    assert path.stat().st_size >= 1_000_000
    assert "Source: https://curl.se/" in text and "Julian R Seward" in text and "Michael Alan Dorman" in text


async def test_the_conversation_imports_as_jsonl_with_its_turn_refs(tmp_path: Path) -> None:
    sample = {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "John",
            "speaker_b": "Maria",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "John", "dia_id": "D1:1", "text": "I started kickboxing last week."},
                {"speaker": "Maria", "dia_id": "D1:2", "text": "I donated my old car to a shelter."},
            ],
        },
        "qa": [{"question": "What sport did John start?", "answer": "kickboxing", "evidence": ["D1:1"], "category": 4}],
    }
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([sample]), encoding="utf-8")
    messages, questions = _locomo(data)
    assert questions == [("What sport did John start?", "kickboxing", {"D1:1"})]
    path = tmp_path / "conv.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    async with await Store.open(tmp_path / "loci.db") as store:
        await import_file(Graph(store), path, "jsonl")
        rows = await store.read(
            lambda db: list(db.conn.execute("SELECT json_extract(meta, '$.ref'), text FROM memory_nodes"))
        )
    said = dict(rows)
    assert "kickboxing" in said["D1:1"] and "8 May 2023" in said["D1:1"]


async def test_a_copied_chat_answer_is_counted(tmp_path: Path) -> None:
    source = tmp_path / "a.py"
    # lines in prose: a `WIDTH = 70` or `Written by` line is answered by its value, without the model writing
    source.write_text("# Greg Ward wrote this module.\n# The default width is 70 columns.\n", encoding="utf-8")
    # the second question asks for no form (a name, a number): so only the copy check can mark its answer
    chat = {"file": str(source), "turns": [["What is the default width?", "70"], ["What does it say?", "wrote"]]}
    same = "The default width is 70 columns."
    model = ScriptedModel([same], parameters=135_000_000, context_window=4_096, repeat_last=True)
    report = await run_chats(model, RunConfig(), [chat])
    assert report["chat_turns"] == 2 and report["chat_copied"] == 1
    assert report["chat_loci"] == 0.5
