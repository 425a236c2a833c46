"""Background notes on the bundled GGUF: a rewrite gives way mid-reply, and a real rewrite is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.jobs.queue import Jobs
from loci.memory.jobs.worker import Foreground, Worker
from loci.runtime.models.base import Model, Request
from loci.runtime.prompt.notes import NOTE_JOB, NoteRefiner, note_messages

pytestmark = pytest.mark.model

LINES = "\n".join(
    [
        'turn 1: context_read({"id": "doc:1", "start": 1, "end": 3}) -> obs:2, 40 tokens: the plot fee is 35 euros',
        'turn 2: context_read({"id": "doc:1", "start": 4, "end": 6}) -> obs:3, 38 tokens: water only before nine',
    ]
)


async def test_an_interrupted_reply_ends_at_the_next_token(gguf: Model) -> None:
    messages = note_messages("You are a careful assistant.", LINES, 96)
    whole = await gguf.generate(Request(messages, max_tokens=48, purpose="note"))
    calls = {"n": 0}

    def after_three() -> bool:
        calls["n"] += 1
        return calls["n"] > 3

    cut = await gguf.generate(Request(messages, max_tokens=48, purpose="note", interrupt=after_three))
    assert whole.completion_tokens > 8
    assert cut.completion_tokens <= 5 and whole.text.startswith(cut.text.strip()[:5])


async def test_the_bundled_model_rewrites_a_queued_note(gguf: Model, tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "loci.db") as store:
        contexts, jobs = ContextStore(store, gguf.count_tokens), Jobs(store)
        payload = {"note": "note:5", "covers": ["turn:1", "turn:2"], "lines": LINES, "size": 96, "system": "Be brief."}
        await jobs.enqueue(NOTE_JOB, payload, key="note:note:5")
        ran = await Worker(jobs, {NOTE_JOB: NoteRefiner(gguf, contexts, jobs, Foreground())}).drain()
        row = await store.read(lambda db: list(db.query("SELECT * FROM jobs"))[0])
        result = json.loads(row["result"])
        stored = await contexts.get(result["note"]) if "note" in result else None
    assert ran["done"] == 1 and row["status"] == "done"
    assert stored is not None and stored.meta["refines"] == "note:5" and stored.tokens <= 96
    assert result["text"]
