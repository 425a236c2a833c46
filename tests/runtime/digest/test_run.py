"""`digest()`: the strategies, evidence and checkpoints, driven by the scripted model over real SQLite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import BackendError, NotFoundError
from loci.memory.records.digest_jobs import DigestJobs
from loci.runtime.digest.run import Progress, digest, resume
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel
from tests.runtime.digest_helpers import NEEDLE, WHOLE, answer_from_memory, chunk_number, memory_step, write_doc

SMALL = {"chunk_tokens": 64, "memory_tokens": 64}


async def job_rows(db: Path) -> list[Any]:
    async with await Store.open(db) as store:
        return await DigestJobs(store).list()


async def test_stream_reads_every_chunk_once_and_answers_from_the_memory_with_its_evidence(tmp_path: Path) -> None:
    doc = write_doc(tmp_path / "log.txt")
    model = ScriptedModel([memory_step] * 5 + [answer_from_memory])
    reports: list[Progress] = []
    record = await digest(
        [doc], WHOLE, model=model, db=tmp_path / "loci.db", strategy="stream", progress=reports.append, **SMALL
    )
    model.check_used()
    assert [chunk_number(call) for call in model.calls[:5]] == [1, 2, 3, 4, 5]
    assert record["answer"] == "7316"
    assert record["evidence"] == [{"id": "doc:1", "name": "log.txt", "start": 13, "end": 18}]
    assert record["tokens_read"] == record["tokens_total"] == 300
    assert record["model_calls"] == 6 and record["status"] == "done" and record["strategy"] == "stream"
    assert set(record) >= {"answer", "evidence", "strategy", "tokens_read", "model_calls", "wall_s", "status", "job_id"}
    assert [p.chunks for p in reports if p.phase == "reading"][-1] == 5 and reports[-1].phase == "done"
    # Each update prompt holds the question, the memory and one chunk: never the whole document.
    assert all(len(call.messages[-1]["content"].split()) < 64 + 64 + 40 for call in model.calls[:5])


async def test_the_memory_bound_is_kept_even_when_a_backend_ignores_max_tokens(tmp_path: Path) -> None:
    doc = write_doc(tmp_path / "log.txt", lines=12, needle_at=None)
    model = ScriptedModel(["word " * 500, "word " * 500, "short"])
    await digest([doc], "Anything?", model=model, db=tmp_path / "loci.db", strategy="stream", **SMALL)
    final_prompt = model.calls[-1].messages[-1]["content"]
    assert len(final_prompt.split("Notes:\n", 1)[1].split()) <= 64


async def test_evidence_follows_the_memory_and_drops_a_note_the_memory_dropped(tmp_path: Path) -> None:
    doc = write_doc(tmp_path / "log.txt", lines=18, needle_at=None)
    steps = [
        "[1] a claim from chunk one",
        "[1] a claim from chunk one\n[2] and one from two",
        "[2] only two is left",
        "done",
    ]
    model = ScriptedModel(steps)
    record = await digest([doc], "What is left?", model=model, db=tmp_path / "loci.db", strategy="stream", **SMALL)
    assert record["evidence"] == [{"id": "doc:1", "name": "log.txt", "start": 7, "end": 12}]


async def test_a_backend_failure_marks_the_job_failed_and_resume_skips_the_chunks_already_read(tmp_path: Path) -> None:
    doc, db = write_doc(tmp_path / "log.txt"), tmp_path / "loci.db"

    def broken(request: Request) -> str:
        raise BackendError("the server went away")

    first = ScriptedModel([memory_step] * 3 + [broken])
    with pytest.raises(BackendError):
        await digest([doc], WHOLE, model=first, db=db, strategy="stream", **SMALL)
    (job,) = await job_rows(db)
    assert job.status == "failed" and "went away" in job.error
    assert job.state["chunk"] == 3 and "gate code 7316" in job.state["memory"]

    second = ScriptedModel([memory_step] * 2 + [answer_from_memory])
    record = await resume(job.id, model=second, db=db)
    second.check_used()
    assert [chunk_number(call) for call in second.calls[:2]] == [4, 5]
    assert record["answer"] == "7316" and record["job_id"] == job.id
    assert record["evidence"][0]["start"] == 13 and record["model_calls"] == 3 + 3
    (job,) = await job_rows(db)
    assert job.status == "done" and job.result == record


async def test_resuming_a_finished_job_returns_its_record_without_calling_the_model(tmp_path: Path) -> None:
    doc, db = write_doc(tmp_path / "log.txt", lines=6), tmp_path / "loci.db"
    record = await digest([doc], "Code?", model=ScriptedModel(["[1] x", "7316"]), db=db, strategy="stream", **SMALL)
    idle = ScriptedModel([])
    assert await resume(record["job_id"], model=idle, db=db) == record
    assert idle.calls == []


async def test_a_cancelled_job_is_marked_interrupted(tmp_path: Path) -> None:
    doc, db = write_doc(tmp_path / "log.txt"), tmp_path / "loci.db"
    started = anyio.Event()

    async def report(progress: Progress) -> None:
        if progress.chunks == 2:
            started.set()
            await anyio.sleep_forever()

    model = ScriptedModel([memory_step] * 2)
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: digest([doc], WHOLE, model=model, db=db, strategy="stream", progress=report, **SMALL))
        with anyio.fail_after(10):
            await started.wait()
        group.cancel_scope.cancel()
    (job,) = await job_rows(db)
    assert job.status == "interrupted" and job.state["chunk"] == 2 and job.error.startswith("interrupted")


async def test_direct_reads_a_document_that_fits_in_one_call(tmp_path: Path) -> None:
    doc = write_doc(tmp_path / "log.txt")

    def whole(request: Request) -> str:
        assert "line 30 says" in request.messages[-1]["content"]
        return "7316"

    model = ScriptedModel([whole])
    record = await digest([doc], "What is the gate code?", model=model, db=tmp_path / "loci.db")
    assert record["strategy"] == "direct" and "fit the window" in record["why"]
    assert record["status"] == "done" and record["model_calls"] == 1
    assert record["evidence"] == [{"id": "doc:1", "name": "log.txt", "start": 1, "end": 30}]


async def test_direct_cuts_a_document_too_large_to_the_window_and_says_so(tmp_path: Path) -> None:
    doc = write_doc(tmp_path / "log.txt", lines=100)

    def head(request: Request) -> str:
        assert "line 1 says" in request.messages[-1]["content"]
        assert "line 100 says" not in request.messages[-1]["content"]
        return "unknown"

    model = ScriptedModel([head], context_window=600)
    record = await digest([doc], "What is the gate code?", model=model, db=tmp_path / "loci.db", strategy="direct")
    assert record["status"] == "partial" and record["reason"].startswith("cut to the window")
    assert 0 < record["tokens_read"] < record["tokens_total"] == 1000


async def test_auto_streams_a_document_past_a_small_window(tmp_path: Path) -> None:
    doc = write_doc(tmp_path / "log.txt", lines=100)
    model = ScriptedModel(
        [lambda r: memory_step(r) if r.purpose == "memory" else answer_from_memory(r)],
        repeat_last=True,
        context_window=600,
    )
    record = await digest([doc], "What is the gate code?", model=model, db=tmp_path / "loci.db", memory_tokens=64)
    assert record["strategy"] == "stream" and "window" in record["why"] and record["answer"] == "7316"
    # A lookup: the model reads the one chunk that holds the line with the question's words, then answers.
    assert record["model_calls"] == len(model.calls) == 2 and record["status"] == "done"
    assert record["evidence"][0] == {"id": "doc:1", "name": "log.txt", "start": 17, "end": 17, "quote": NEEDLE}


async def test_navigate_runs_the_agent_with_the_context_tools(tmp_path: Path) -> None:
    doc = write_doc(tmp_path / "log.txt")
    read = {"state": "reading", "tool": "context_search", "arguments": {"query": "harbour gate"}}
    done = {"state": "found", "answer": "7316", "evidence": [{"id": "doc:1", "start": 17, "end": 17}]}
    model = ScriptedModel([json.dumps(read), json.dumps(done)])
    record = await digest([doc], "What is the gate code?", model=model, db=tmp_path / "loci.db", strategy="navigate")
    model.check_used()
    assert record["answer"] == "7316" and record["strategy"] == "navigate" and record["model_calls"] == 2
    assert record["evidence"] == [{"id": "doc:1", "name": "log.txt", "start": 17, "end": 17}]


async def test_an_answer_about_something_else_than_its_question_is_chosen_again_from_its_found_lines(
    tmp_path: Path,
) -> None:
    # The job: a lookup answered about Fractions, five times over, and exited `done`. The answer rests
    # on none of the lines found for the question, so it is chosen from them (runtime/digest/choice.py).
    doc = write_doc(tmp_path / "log.txt", lines=100)
    fractions = "It is a special method that allows you to compare two Fractions. " * 5
    model = ScriptedModel([memory_step, fractions])
    record = await digest([doc], "What is the gate code?", model=model, db=tmp_path / "loci.db", strategy="stream")
    assert record["answer"] == NEEDLE and record["status"] == "done"


async def test_an_answer_whose_evidence_lacks_the_questions_words_is_partial(tmp_path: Path) -> None:
    doc = write_doc(tmp_path / "log.txt")
    done = {"state": "found", "answer": "the line says nothing", "evidence": [{"id": "doc:1", "start": 3, "end": 3}]}
    model = ScriptedModel([json.dumps(done)])
    record = await digest([doc], "What is the gate code?", model=model, db=tmp_path / "loci.db", strategy="navigate")
    assert record["status"] == "partial"
    assert "0 of the question's 2 content words (not: gate, code)" in record["reason"]


async def test_a_job_belongs_to_its_project_and_another_project_cannot_resume_it(tmp_path: Path) -> None:
    doc, db = write_doc(tmp_path / "log.txt", lines=6), tmp_path / "loci.db"
    model = ScriptedModel(["[1] x", "7316"])
    record = await digest([doc], "Code?", model=model, db=db, strategy="stream", project="shop", **SMALL)
    async with await Store.open(db) as store:
        assert [job.id for job in await DigestJobs(store, project="shop").list()] == [record["job_id"]]
        assert await DigestJobs(store, project="blog").list() == []
        runs = await store.read(lambda d: d.conn.execute("SELECT project FROM runs").fetchall())
    assert runs == [("shop",)]
    with pytest.raises(NotFoundError):
        await resume(record["job_id"], model=ScriptedModel([]), db=db, project="blog")
