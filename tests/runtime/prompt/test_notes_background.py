"""Notes rewritten in the background: the fold writes an extract at once, a worker rewrites it later.

The model here is scripted; what is tested is the runtime's logic: which job is
queued, when the rewrite may call the model, and when the window takes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import BackendError
from loci.memory.jobs.queue import Jobs
from loci.memory.jobs.worker import Foreground, Worker
from loci.runtime.cli.chat import chat_loop, open_chat
from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.models.base import Reply, Request
from loci.runtime.models.ledger import Ledger
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.models.wrapper import ModelWrapper
from loci.runtime.prompt.build import RegionSizes
from loci.runtime.prompt.notes import NOTE_JOB, NoteMode, NoteQueue, NoteRefiner, NoteWriter, note_problem
from loci.runtime.prompt.window import NoteLine, TurnLine, extract_note
from loci.runtime.session.background import Background, background_worker
from loci.runtime.session.session import Session, open_session

REFINED = "refined: the lines so far were routine entries"
SIZES = RegionSizes.for_window(1_024)


def reader(turns: int, note: str = REFINED) -> Callable[[Request], dict[str, Any] | str]:
    """Reads doc:1 a line a turn and answers at `turns`; writes `note` when asked for one."""
    seen = {"turn": 0}

    def policy(request: Request) -> dict[str, Any] | str:
        if request.purpose == "note":
            return note
        seen["turn"] += 1
        if seen["turn"] % turns == 0:
            return {"state": "reading", "answer": "done", "evidence": []}
        line = seen["turn"]
        return {"state": "reading", "tool": "context_read", "arguments": {"id": "doc:1", "start": line, "end": line}}

    return policy


def document(tmp_path: Path) -> Path:
    doc = tmp_path / "log.txt"
    doc.write_text("\n".join(f"line {i}: routine entry " + "filler " * 30 for i in range(1, 400)) + "\n")
    return doc


async def note_jobs(store: Store) -> list[dict[str, Any]]:
    return await store.read(lambda db: list(db.query("SELECT * FROM jobs WHERE kind = ? ORDER BY id", [NOTE_JOB])))


async def wait_until(check: Callable[[], Any], seconds: float = 20) -> None:
    with anyio.fail_after(seconds):
        while not await check():
            await anyio.sleep(0.01)


def refiner(session: Session, model: Any = None) -> tuple[NoteRefiner, Jobs, Foreground]:
    evolution = session.experience.evolution
    notes = NoteRefiner(model or session.agent.model, session.contexts, evolution.jobs, evolution.foreground)
    return notes, evolution.jobs, evolution.foreground


# The session queues its folds' rewrites and leaves them to the caller: the test runs them itself.
LATER = Background.CALLER


async def test_a_fold_writes_an_extract_and_queues_its_rewrite(tmp_path: Path) -> None:
    model = ScriptedModel([reader(40)], repeat_last=True)
    config = RunConfig(limits=Limits(max_turns=41), sizes=SIZES)
    async with open_session(
        model, tmp_path / "loci.db", config, files=[document(tmp_path)], background=LATER
    ) as session:
        await session.agent.run("read the log")
        jobs = await note_jobs(session.store)
        notes = [item for item in session.agent.window.items if item.render().startswith("note:")]
    assert [call.purpose for call in model.calls] == ["act"] * 40  # no turn waited for a note
    assert jobs and all(job["status"] == "queued" for job in jobs) and session.agent.notes.queued == len(jobs)
    payload = json.loads(jobs[0]["payload"])
    assert jobs[0]["key"] == f"note:{payload['note']}"
    assert payload["lines"].startswith("turn 1") and payload["size"] > 0 and payload["system"]
    assert notes and all("[extract]" in item.render() for item in notes)


async def test_each_queued_rewrite_wakes_the_worker_that_will_run_it(tmp_path: Path) -> None:
    model = ScriptedModel([reader(40)], repeat_last=True)
    config = RunConfig(limits=Limits(max_turns=41), sizes=SIZES)
    async with open_session(model, tmp_path / "loci.db", config, files=[document(tmp_path)]) as session:
        await session.agent.run("read the log")  # no worker: the folds keep their extracts
        woken: list[int] = []
        queue = NoteQueue(Jobs(session.store), lambda: woken.append(1))
        agent = session.agent
        writer = NoteWriter(model, agent.window, agent.sizes, NoteMode.BACKGROUND, "system", Ledger(), queue=queue)
        await writer.fold(agent.window.items[:2])
        await writer.fold(agent.window.items[:2])
        jobs = await note_jobs(session.store)
    assert len(jobs) == 2 and writer.queued == 2 and woken == [1, 1]


async def test_without_a_worker_a_fold_keeps_its_extract_and_queues_nothing(tmp_path: Path) -> None:
    model = ScriptedModel([reader(40)], repeat_last=True)
    config = RunConfig(limits=Limits(max_turns=41), sizes=SIZES)
    async with open_session(model, tmp_path / "loci.db", config, files=[document(tmp_path)]) as session:
        await session.agent.run("read the log")  # as `loci run` on a local model: no worker in the process
        jobs = await note_jobs(session.store)
        rendered = session.agent.window.render()
    assert jobs == [] and session.agent.notes.queued == 0
    assert "[extract]" in rendered and all(call.purpose == "act" for call in model.calls)


async def test_the_worker_rewrites_a_note_and_the_next_fold_takes_it(tmp_path: Path) -> None:
    model = ScriptedModel([reader(30)], repeat_last=True)
    config = RunConfig(limits=Limits(max_turns=31), sizes=SIZES)
    async with open_session(
        model, tmp_path / "loci.db", config, files=[document(tmp_path)], background=LATER
    ) as session:
        await session.agent.run("read the log")
        notes, jobs, _ = refiner(session)
        ran = await Worker(jobs, {NOTE_JOB: notes}).drain()
        done = await note_jobs(session.store)
        result = json.loads(done[0]["result"])
        stored = await session.contexts.get(result["note"])
        before = len(model.calls)
        await session.agent.run("read on", keep_window=True)
        prompts = [call.messages[1]["content"] for call in model.calls[before:]]
    assert ran["done"] == len(done) and all(job["status"] == "done" for job in done)
    assert stored.meta["refines"] == json.loads(done[0]["payload"])["note"] and stored.meta["method"] == "model"
    assert result["text"] == REFINED
    assert session.agent.notes.adopted >= 1
    assert any(REFINED in prompt for prompt in prompts)  # the window shows the rewrite after its next fold


async def test_a_local_model_rewrites_only_while_no_run_is_going(tmp_path: Path) -> None:
    model = ScriptedModel([REFINED])
    async with open_session(model, tmp_path / "loci.db") as session:
        notes, jobs, foreground = refiner(session)
        payload = {"note": "note:99", "covers": ["turn:1", "turn:2"], "lines": "turn 1: ...", "size": 64, "system": "s"}
        async with background_worker(jobs, {NOTE_JOB: notes}, poll_s=0.05) as worker:
            async with foreground.turn():
                await jobs.enqueue(NOTE_JOB, payload, key="note:note:99")
                worker.wake()
                await wait_until(lambda: _status(session.store, "running"))
                assert model.calls == []  # claimed, but waiting for the run to end
            await wait_until(lambda: _status(session.store, "done"))
    assert [call.purpose for call in model.calls] == ["note"]


class SlowNote(ModelWrapper):
    """A serial model whose note reply waits for `release`, and reports whether it was interrupted."""

    def __init__(self, inner: ScriptedModel) -> None:
        super().__init__(inner)
        self.started, self.release = anyio.Event(), anyio.Event()
        self.interrupted: list[bool] = []

    async def generate(self, request: Request) -> Reply:
        if request.purpose == "note" and not self.interrupted:
            self.started.set()
            await self.release.wait()
        if request.interrupt is not None:
            self.interrupted.append(request.interrupt())
        return await self.inner.generate(request)


async def test_a_run_that_starts_during_a_rewrite_interrupts_it_and_the_job_waits_unspent(tmp_path: Path) -> None:
    slow = SlowNote(ScriptedModel([REFINED, REFINED]))
    async with open_session(ScriptedModel([]), tmp_path / "loci.db") as session:
        notes, jobs, foreground = refiner(session, slow)
        payload = {"note": "note:7", "covers": ["turn:1"], "lines": "turn 1: ...", "size": 64, "system": "s"}
        await jobs.enqueue(NOTE_JOB, payload, key="note:note:7")
        async with background_worker(jobs, {NOTE_JOB: notes}, poll_s=0.05) as worker:
            await slow.started.wait()
            async with foreground.turn():
                slow.release.set()  # the reply comes back while a run is going: it was interrupted
                await wait_until(lambda: _deferred(worker))
                row = (await note_jobs(session.store))[0]
            await wait_until(lambda: _status(session.store, "done"))
            done = (await note_jobs(session.store))[0]
    assert "foreground run started" in row["error"]
    assert row["attempts"] <= 1 and done["attempts"] == 1  # the interrupted attempt was given back
    assert slow.interrupted == [True, False]
    assert worker.ran["deferred"] == 1 and worker.ran["done"] == 1


async def test_a_failing_rewrite_keeps_the_extract_and_the_error(tmp_path: Path) -> None:
    def broken(request: Request) -> str:
        raise BackendError("the server timed out")

    model = ScriptedModel([reader(30)], repeat_last=True)
    config = RunConfig(limits=Limits(max_turns=31), sizes=SIZES)
    async with open_session(
        model, tmp_path / "loci.db", config, files=[document(tmp_path)], background=LATER
    ) as session:
        await session.agent.run("read the log")
        notes, jobs, _ = refiner(session, ScriptedModel([broken], repeat_last=True))
        await Worker(jobs, {NOTE_JOB: notes}).drain()
        rows = await note_jobs(session.store)
        adopted = await session.agent.notes.adopt()
    assert rows and all(row["status"] == "failed" for row in rows)
    assert all("BackendError: the server timed out" in row["error"] for row in rows)
    assert adopted == 0 and "[extract]" in session.agent.window.render()


class Remote(ScriptedModel):
    """A scripted model that serves calls concurrently, as a remote endpoint does; an act call after the
    first fold waits until that fold's note is rewritten, so the test does not depend on timing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, serial=False, **kwargs)
        self.ready: Callable[[], Any] | None = None

    async def generate(self, request: Request) -> Reply:
        if request.purpose == "act" and self.ready is not None:
            await wait_until(self.ready)
        return await super().generate(request)


async def test_a_remote_models_notes_are_rewritten_during_the_run(tmp_path: Path) -> None:
    model = Remote([reader(60)], repeat_last=True)
    config = RunConfig(limits=Limits(max_turns=61), sizes=SIZES)
    async with open_session(model, tmp_path / "loci.db", config, files=[document(tmp_path)]) as session:

        async def first_note_done() -> bool:
            rows = await note_jobs(session.store)
            return bool(rows) and rows[0]["status"] == "done"

        async def ready() -> bool:
            return session.agent.notes.queued == 0 or await first_note_done()

        model.ready = ready
        await session.agent.run("read the log")
        adopted = session.agent.notes.adopted
    acts = [call.messages[1]["content"] for call in model.calls if call.purpose == "act"]
    assert adopted >= 1
    assert any(REFINED in prompt for prompt in acts)  # taken into the window within the same run


async def test_a_chat_rewrites_its_notes_while_it_waits_for_the_person(tmp_path: Path) -> None:
    model = ScriptedModel([reader(30)], repeat_last=True)
    config = RunConfig(limits=Limits(max_turns=31), sizes=SIZES)
    home, files = tmp_path / "loci.db", [document(tmp_path)]
    async with open_session(model, home, config, files=files, background=Background.ALL) as session:
        chat = await open_chat(session, "scripted", write=lambda text: None)
        lines = iter(["read the log", "read on"])

        async def read() -> str | None:
            rows = await note_jobs(session.store)
            if rows:  # the first line folded: the person answers after the note is rewritten
                await wait_until(lambda: _status(session.store, "done"))
            return next(lines, None)

        with anyio.fail_after(60):
            await chat_loop(chat, read)
        adopted = session.agent.notes.adopted
    assert [call.purpose for call in model.calls].count("note") >= 1
    assert adopted >= 1


@pytest.mark.parametrize(("mode", "child"), [(NoteMode.BACKGROUND, NoteMode.EXTRACT), (NoteMode.MODEL, NoteMode.MODEL)])
def test_a_child_run_never_queues_a_rewrite_it_could_not_read(mode: NoteMode, child: NoteMode) -> None:
    assert RunConfig(note_mode=mode).for_child().note_mode is child


async def _status(store: Store, status: str) -> bool:
    rows = await note_jobs(store)
    return bool(rows) and all(row["status"] == status for row in rows)


async def _deferred(worker: Worker) -> bool:
    return worker.ran["deferred"] == 1


def test_a_looping_or_empty_note_is_refused_and_a_plain_one_kept() -> None:
    loop = " ".join(f"{n}. extract: 1" for n in range(1, 30))
    assert "repeats itself" in (note_problem(loop) or "")
    assert note_problem("  ") == "the model wrote nothing"
    assert note_problem("Read pages 1 to 8 of doc:1; the fee is 35 euros, due in March (obs:4).") is None


async def test_a_looping_rewrite_keeps_the_extract(tmp_path: Path) -> None:
    loop = " ".join(f"{n}. extract: 1" for n in range(1, 30))
    async with open_session(ScriptedModel([loop]), tmp_path / "loci.db") as session:
        notes, jobs, _ = refiner(session)
        payload = {"note": "note:3", "covers": ["turn:1"], "lines": "turn 1: ...", "size": 64, "system": "s"}
        await jobs.enqueue(NOTE_JOB, payload, key="note:note:3")
        await Worker(jobs, {NOTE_JOB: notes}).drain()
        [row] = await note_jobs(session.store)
    assert row["status"] == "done" and json.loads(row["result"])["kept"] == "extract"


def test_a_note_folded_into_a_note_gives_its_text_not_its_header() -> None:
    older = NoteLine("note:4", ["turn:1", "turn:2"], "the fee is 35 euros", "extract")
    turn = TurnLine(3, "context_read", {"id": "doc:1"}, "obs:5", 20, False, "turn:3", "line 3")
    text = extract_note([older, turn], 100, lambda t: len(t.split()))
    assert text.startswith("the fee is 35 euros | turn 3 [turn:3]") and "note:4" not in text


def test_an_extract_gives_every_folded_item_a_share_so_a_long_old_note_cannot_crowd_out_the_turns() -> None:
    older = NoteLine("note:4", ["turn:1"], "old finding " * 100, "extract")
    turns = [TurnLine(n, "context_read", {"id": "doc:1"}, f"obs:{n}", 20, False, f"turn:{n}", "x") for n in (3, 4, 5)]
    text = extract_note([older, *turns], 60, lambda t: len(t.split()))
    assert len(text.split()) <= 60
    assert all(f"turn {n} [turn:{n}]" in text for n in (3, 4, 5)) and text.startswith("old finding")


async def test_a_resumed_chat_takes_the_rewrite_of_a_note_it_restored(tmp_path: Path) -> None:
    async with open_session(ScriptedModel([REFINED]), tmp_path / "loci.db") as session:
        extract = await session.contexts.add_text("note", "note on 2 items", "turn 1: ... | turn 2: ...")
        notes, jobs, _ = refiner(session)
        payload = {"note": extract.id, "covers": ["turn:1", "turn:2"], "lines": "turn 1", "size": 64, "system": "s"}
        await jobs.enqueue(NOTE_JOB, payload, key=f"note:{extract.id}")
        await Worker(jobs, {NOTE_JOB: notes}).drain()
        window = session.agent.window
        await window.restore([extract.id])  # as `loci chat --resume` rebuilds the window from the store
        taken = await session.agent.notes.adopt()
    assert taken == 1 and REFINED in window.render() and extract.id not in window.ids()


async def test_a_chat_on_a_remote_model_runs_each_note_job_once(tmp_path: Path) -> None:
    model = ScriptedModel([reader(30)], repeat_last=True, serial=False)
    config = RunConfig(limits=Limits(max_turns=31), sizes=SIZES)
    home, files = tmp_path / "loci.db", [document(tmp_path)]
    async with open_session(model, home, config, files=files, background=Background.ALL) as session:
        chat = await open_chat(session, "scripted", write=lambda text: None)
        lines = iter(["read the log", "read on", "read further"])

        async def read() -> str | None:
            if await note_jobs(session.store):  # each answer is read after its notes are rewritten
                await wait_until(lambda: _status(session.store, "done"))
            return next(lines, None)

        with anyio.fail_after(60):
            await chat_loop(chat, read)
        rows = await note_jobs(session.store)
    notes = [call for call in model.calls if call.purpose == "note"]
    assert len(rows) >= 2 and all(row["status"] == "done" and row["attempts"] == 1 for row in rows)
    assert len(notes) == len(rows)  # each job was rewritten once
    assert len({row["owner"] for row in rows}) == 1  # by the one worker the session runs
