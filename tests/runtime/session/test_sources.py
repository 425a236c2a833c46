"""A question with no files looks in the memory first: an imported conversation, not a document that shares a name."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import anyio

from loci.memory.graph.conversation import Turn, remember_conversation
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.session.session import open_session
from loci.runtime.session.sources import MEMORY_NAME, ask

SMALL = 135_000_000
COPYRIGHT = (
    "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
    "Upstream-Name: vms-tools\n"
    "Files: *\n"
    "Copyright: 2009-2022, John Malmberg\n"
    "License: BSD-2-clause\n"
)
TURNS = [
    Turn("Maria", "Hey John! How was your week?", "1", "1", date(2023, 5, 8)),
    Turn("John", "Great! I went to my first kickboxing class, it was intense.", "2", "1", date(2023, 5, 8)),
    Turn("Maria", "Wow, kickboxing! I donated my old car to a shelter.", "3", "1", date(2023, 5, 8)),
    Turn("John", "I did taekwondo as a kid too, got my black belt at 16.", "4", "2", date(2023, 6, 2)),
    Turn("Maria", "I started volunteering at the homeless shelter on Fridays.", "5", "2", date(2023, 6, 2)),
    Turn("John", "My son loves the park near our house.", "6", "2", date(2023, 6, 2)),
]
QUESTION = "What martial arts has John done?"


async def _home(tmp_path: Path) -> Path:
    """A home with an imported conversation and, loaded for another job, a copyright file naming a John."""
    db = tmp_path / "loci.db"
    copyright_file = tmp_path / "copyright"
    copyright_file.write_text(COPYRIGHT, encoding="utf-8")
    async with open_session(ScriptedModel([]), db, files=[copyright_file]) as session:
        await remember_conversation(session.graph, TURNS, cause="import conv.jsonl")
    return db


async def test_the_martial_arts_question_is_answered_from_the_conversation(tmp_path: Path) -> None:
    db = await _home(tmp_path)
    model = ScriptedModel(["Kickboxing and taekwondo."], parameters=SMALL, context_window=4_096)
    async with open_session(model, db) as session:
        with anyio.fail_after(30):
            answered = await ask(session, QUESTION, [])
        documents = [obj.name for obj in await session.contexts.list(["doc"])]
    model.check_used()
    shown = model.calls[0].messages[1]["content"]
    assert "kickboxing" in shown and "Malmberg" not in shown
    assert answered.source is not None and answered.source.name == "memory"
    assert answered.result.answer == "Kickboxing and taekwondo."
    cited = {i for ids in answered.memories for i in ids}
    texts = {r.node.id: r.node.text for r in answered.source.found}
    assert cited and all("John" in texts[i] for i in cited)  # the answer cites John's turns
    assert MEMORY_NAME not in documents  # the memory read for the run is not left among the home's documents


async def test_the_run_records_the_cited_turns_as_used(tmp_path: Path) -> None:
    db = await _home(tmp_path)
    model = ScriptedModel(["Kickboxing and taekwondo."], parameters=SMALL, context_window=4_096)
    async with open_session(model, db) as session:
        answered = await ask(session, QUESTION, [])
        used = await session.store.read(
            lambda db: [row[0] for row in db.conn.execute("SELECT dst FROM memory_edges WHERE kind = 'ground'")]
        )
    cited = {i for ids in answered.memories for i in ids}
    assert cited and cited <= set(used)


async def test_a_question_about_the_document_reads_the_documents(tmp_path: Path) -> None:
    db = await _home(tmp_path)
    model = ScriptedModel(["BSD-2-clause"], parameters=SMALL, context_window=4_096, repeat_last=True)
    async with open_session(model, db) as session:
        answered = await ask(session, "Which license covers vms-tools?", [])
    assert answered.source is not None and answered.source.name == "documents"
    assert "BSD-2-clause" in model.calls[0].messages[1]["content"]


async def test_memory_search_still_finds_the_turn_after_the_runs(tmp_path: Path) -> None:
    db = await _home(tmp_path)
    for _ in range(3):
        model = ScriptedModel(["Kickboxing and taekwondo."], parameters=SMALL, context_window=4_096)
        async with open_session(model, db) as session:
            await ask(session, QUESTION, [])
    async with open_session(ScriptedModel([]), db) as session:
        found = await Recall(Graph(session.store)).recall("kickboxing John", k=3, record=False)
    assert "kickboxing" in found[0].node.text
    assert not any(r.node.text.startswith(QUESTION) for r in found)  # no run's episode among them


async def test_memory_search_for_a_kind_finds_the_turn_that_names_one(tmp_path: Path) -> None:
    db = await _home(tmp_path)
    async with open_session(ScriptedModel([]), db) as session:
        found = await Recall(Graph(session.store)).recall("martial arts", k=3, record=False)
    assert found and "taekwondo" in found[0].node.text  # WordNet: taekwondo is a martial art
