"""Constant-size working state and prune-and-write, over long scripted runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.prompt.build import RegionSizes
from loci.runtime.prompt.notes import NoteMode
from loci.runtime.prompt.window import NoteLine, TurnLine, Window
from loci.runtime.session.session import open_session

CONSTRAINT = "never spend more than 40 euros"


def long_run_policy(turns: int) -> Any:
    """Reads doc:1 line by line; learns the constraint at turn 3 and keeps it in its state."""
    seen = {"turn": 0}

    def policy(request: Request) -> dict[str, Any] | str:
        if request.purpose == "note":
            return "notes: read lines so far; " + (CONSTRAINT if CONSTRAINT in request.messages[1]["content"] else "")
        seen["turn"] += 1
        turn = seen["turn"]
        state = f"goal: find the fee; constraint: {CONSTRAINT}" if turn > 3 else "goal: find the fee"
        if turn >= turns:
            return {"state": state, "answer": "done", "evidence": []}
        return {"state": state, "tool": "context_read", "arguments": {"id": "doc:1", "start": turn, "end": turn}}

    return policy


async def test_a_constraint_from_turn_3_survives_to_turn_200(tmp_path: Path) -> None:
    doc = tmp_path / "notes.txt"
    lines = [f"line {i}: routine entry number {i}" for i in range(1, 260)]
    lines[2] = f"line 3: the client says {CONSTRAINT}"
    doc.write_text("\n".join(lines) + "\n", encoding="utf-8")
    model = ScriptedModel([long_run_policy(200)], repeat_last=True)
    config = RunConfig(limits=Limits(max_turns=201), sizes=RegionSizes.for_window(2_048))
    async with open_session(model, tmp_path / "loci.db", config, files=[doc]) as session:
        result = await session.agent.run("find the fee")
        turn_200 = [c for c in model.calls if c.purpose == "act"][199].messages[1]["content"]
        found = await session.contexts.search("40 euros", k=20)
        window_ids = session.agent.window.ids()
    assert len(result.turns) == 200
    state_region = turn_200.split("State (your working notes):\n", 1)[1]
    assert CONSTRAINT in state_region.split("\n\n")[0]
    assert "turn 3 " not in turn_200  # turn 3 left the window long ago...
    assert any(ref.startswith("note:") for ref in window_ids)
    kinds = {hit.id.split(":")[0] for hit in found}
    assert {"doc", "obs"} <= kinds  # ...but what it saw is still found by search


@pytest.mark.parametrize("mode", [NoteMode.MODEL, NoteMode.BACKGROUND])
async def test_prompt_stays_within_budget_at_every_turn(tmp_path: Path, mode: NoteMode) -> None:
    doc = tmp_path / "notes.txt"
    doc.write_text("\n".join(f"line {i} " + "filler " * (i % 50) for i in range(1, 400)) + "\n", encoding="utf-8")
    model = ScriptedModel([long_run_policy(150)], repeat_last=True)
    config = RunConfig(limits=Limits(max_turns=151), sizes=RegionSizes.for_window(1_024), note_mode=mode)
    async with open_session(model, tmp_path / "loci.db", config, files=[doc]) as session:
        await session.agent.run("find the fee")
        queued = session.agent.notes.queued
    limit = config.sizes.total - config.sizes.reply
    sizes = [sum(model.count_tokens(m["content"]) for m in call.messages) for call in model.calls]
    notes = [call for call in model.calls if call.purpose == "note"]
    if mode is NoteMode.MODEL:  # the turn waited for each note, and the note's prompt is budgeted too
        assert notes and queued == 0
    else:  # the folds wrote extracts (no worker here to rewrite them): no turn waited for a model's note
        assert not notes and queued == 0
    assert len(sizes) == 150 + len(notes)
    assert max(sizes) <= limit


async def test_history_prune_with_bad_ids_is_a_clear_error(tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("alpha 1\nbeta 2\n", encoding="utf-8")
    steps = [
        {"state": "", "tool": "context_read", "arguments": {"id": "doc:1"}},
        {"state": "", "tool": "history_prune", "arguments": {"note": "read a", "turn_ids": ["turn:999"]}},
        {
            "state": "",
            "tool": "history_prune",
            "arguments": {"note": "read doc:1: alpha, beta", "turn_ids": ["turn:3"]},
        },
        {"state": "", "answer": "1", "evidence": [{"id": "doc:1", "start": 1, "end": 1}]},
    ]
    model = ScriptedModel(steps)
    async with open_session(model, tmp_path / "loci.db", files=[doc]) as session:
        result = await session.agent.run("task")
        notes = await session.contexts.list(["note"])
    bad = model.calls[2].messages[1]["content"]
    assert "Error from history_prune" in bad and "not in the window: turn:999" in bad and "turn:3" in bad
    assert result.status == "done"
    assert [n.meta["covers"] for n in notes] == [["turn:3"]]
    assert "note:" in model.calls[3].messages[1]["content"]


async def test_an_over_long_state_is_sent_back_then_cut(tmp_path: Path) -> None:
    sizes = RegionSizes.for_window(2_048, state=20)
    long_state = " ".join(["remember"] * 60)
    steps = [
        {"state": long_state, "answer": "x", "evidence": []},
        {"state": long_state, "answer": "x", "evidence": []},
        {"state": long_state, "answer": "x", "evidence": []},
    ]
    model = ScriptedModel(steps)
    async with open_session(
        model, tmp_path / "loci.db", RunConfig(limits=Limits(max_retries=2), sizes=sizes)
    ) as session:
        result = await session.agent.run("task")
    assert "`state` is 60 tokens; the limit is 20" in model.calls[1].messages[1]["content"]
    assert result.turns[0].state_cut is True
    assert model.count_tokens(result.turns[0].action.state) <= 20


async def test_pruned_turns_and_notes_are_readable_context_objects(tmp_path: Path) -> None:
    doc = tmp_path / "n.txt"
    doc.write_text("\n".join(f"entry {i}" for i in range(1, 100)) + "\n", encoding="utf-8")
    model = ScriptedModel([long_run_policy(60)], repeat_last=True)
    async with open_session(
        model,
        tmp_path / "loci.db",
        RunConfig(limits=Limits(max_turns=61), sizes=RegionSizes.for_window(1_024)),
        files=[doc],
    ) as session:
        await session.agent.run("task")
    async with await Store.open(tmp_path / "loci.db") as store:
        rows = store.read_sync(
            lambda db: db.execute("SELECT id, meta FROM context_objects WHERE kind = 'note' ORDER BY id").fetchall()
        )
        turns = store.read_sync(
            lambda db: db.execute("SELECT id FROM context_objects WHERE kind = 'turn' ORDER BY id").fetchall()
        )
    assert rows, "the window never pruned"
    covers = {f"note:{number}": json.loads(meta)["covers"] for number, meta in rows}

    def reached(ref: str) -> set[str]:
        """The turns a note covers, through the notes it folded in turn."""
        return {ref} if not ref.startswith("note:") else {t for inner in covers.get(ref, []) for t in reached(inner)}

    newest, stored = f"note:{rows[-1][0]}", [f"turn:{number}" for (number,) in turns]
    assert stored[0] == "turn:3"  # the first turn's object
    assert set(stored[:3]) <= reached(newest)  # the early turns are read through the newest note's chain
    assert reached(newest) <= set(stored)  # and each turn it names is stored


def words(text: str) -> int:
    return len(text.split())


def turn_line(n: int) -> TurnLine:
    return TurnLine(n, "context_read", {"id": "doc:1"}, f"obs:{n}", 50, False, f"turn:{n}", "routine " * 10)


async def test_a_fold_puts_its_note_after_the_notes_so_the_prompt_changes_only_from_there(store: Store) -> None:
    window = Window(ContextStore(store, words), words)
    window.items = [NoteLine("note:1", ["turn:1"], "the fee is 35 euros", "extract")]
    window.items += [turn_line(n) for n in range(2, 14)]
    before = window.render()
    folded = window.to_fold(budget=200, note_size=20)
    assert [item.turn for item in folded] == list(range(2, 13))  # the older turns; the newest stays
    line = await window.prune("read lines 2 to 12", [f"turn:{n}" for n in range(2, 13)], method="extract")
    after = window.render()
    assert window.ids() == ["note:1", line.note_id, "turn:13"]
    head = before.split("\n")[0]
    assert after.startswith(head + "\n") and window.tokens() <= 200  # the old note's line is unchanged


async def test_notes_that_would_outgrow_half_the_window_are_folded_at_the_head(store: Store) -> None:
    window = Window(ContextStore(store, words), words)
    window.items = [NoteLine(f"note:{n}", [f"turn:{n}"], "finding " * 25, "extract") for n in range(1, 4)]
    window.items += [turn_line(n) for n in range(4, 8)]
    folded = window.to_fold(budget=200, note_size=30)
    assert [item.render().split()[0] for item in folded[:3]] == ["note:1", "note:2", "note:3"]
    assert folded[-1] is window.items[-2]  # everything but the newest turn
