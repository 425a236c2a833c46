"""Long-document jobs: `await digest(paths, question)`, and `await resume(job_id)`.

A job answers one question over one or more documents, with a strategy
(`stream`, `navigate`, `direct`, or `auto`, which picks one and says why).
Its life, one layer a step:

    check      refuse bad files and sizes before anything is written
    create     a `digest_jobs` row: the question, settings, files and hashes
    load       the documents into the context store (an unchanged file once)
    run        the strategy, through `Session.run` on a session over the job's
               own store (opened once), so every job leaves a run record
               (`source="digest"`) and an episode; `stream` checkpoints the
               row after every chunk
    finish     the record below, stored on the row and returned

The record is what `loci digest --json` prints: `answer`, `evidence` (the
line ranges it rests on), `strategy` (and `why`), `tokens_read`,
`tokens_total`, `model_calls`, `wall_s` (over every run of the job),
`status` (`done`, or `partial` with a `reason`), `job_id` and `run_id` (the
run record of this run of the job).

A job that raises is marked `failed` with its error; one cancelled (Ctrl-C,
a cancelled MCP call) is marked `interrupted`; one killed stays `running`
with a dead pid on this host, which `loci jobs` shows as `interrupted`. `resume` checks
that the files still hash the same, then continues from the checkpoint:
a streamed job does not read again the chunks it has read.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from loci.memory.context.store import ContextObject, ContextStore
from loci.memory.engines.base import Engine
from loci.memory.engines.select import use_engine
from loci.memory.engines.sqlite.store import default_db_path
from loci.memory.errors import UsageError
from loci.memory.projects import DEFAULT_PROJECT
from loci.memory.records.digest_jobs import DigestJob, DigestJobs
from loci.runtime.digest.choice import from_evidence
from loci.runtime.digest.inputs import Input, check_inputs, load_inputs
from loci.runtime.digest.lexical import Found
from loci.runtime.digest.modes import GLOBAL, STRATEGIES, as_result, choose, direct, navigate, session_config
from loci.runtime.digest.settings import MeteredModel, Progress, Settings
from loci.runtime.digest.stream import StreamReader, evidence_of, found_evidence
from loci.runtime.digest.verdict import evidence_text, judge
from loci.runtime.loop.records import RunResult
from loci.runtime.models.base import Model
from loci.runtime.models.specs import DEFAULT_SPEC, load_model
from loci.runtime.session.experience import Brief
from loci.runtime.session.session import Session, open_session

__all__ = ["Progress", "ProgressHook", "digest", "resume"]

ProgressHook = Callable[[Progress], Awaitable[None] | None]


async def digest(
    paths: Sequence[str | Path],
    question: str,
    *,
    model: Model | str = DEFAULT_SPEC,
    db: str | Path | Engine | None = None,
    strategy: str = "auto",
    chunk_tokens: int | None = None,
    memory_tokens: int | None = None,
    max_turns: int = 8,
    context_window: int | None = None,
    progress: ProgressHook | None = None,
    project: str = DEFAULT_PROJECT,
) -> dict[str, Any]:
    """Answer `question` over the files at `paths` in `project` (its job, documents and run); the record
    `loci digest --json` prints."""
    if strategy not in STRATEGIES:
        raise UsageError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    if not question.strip():
        raise UsageError("the question is empty")
    inputs = await anyio.to_thread.run_sync(check_inputs, list(paths))
    async with _model(model, context_window) as (loaded, spec):
        settings = Settings.for_model(
            loaded, question, chunk_tokens=chunk_tokens, memory_tokens=memory_tokens, max_turns=max_turns
        )
        async with use_engine(db or default_db_path()) as store:
            files = [item.as_json() for item in inputs]
            jobs = DigestJobs(store, project=project)
            job = await jobs.get(await jobs.create(question, strategy, spec, settings.as_json(), files))
            return await _Run(store, job, loaded, inputs, settings, progress).run()


async def resume(
    job_id: int,
    *,
    model: Model | str | None = None,
    db: str | Path | Engine | None = None,
    context_window: int | None = None,
    progress: ProgressHook | None = None,
    project: str = DEFAULT_PROJECT,
) -> dict[str, Any]:
    """Continue job `job_id` of `project` from its last checkpoint (a finished job returns its record)."""
    async with use_engine(db or default_db_path()) as store:
        job = await DigestJobs(store, project=project).get(job_id)
        if job.status == "done" and job.result is not None:
            return job.result
        if job.shown_status == "running" and not job.runs_here:
            where = f"process {job.pid}" + (f" on {job.host}" if job.host else "")
            raise UsageError(f"job {job_id} is still running ({where}); stop it before resuming")
        inputs = await anyio.to_thread.run_sync(_recheck, job)
        async with _model(model or job.model, context_window) as (loaded, _):
            kept = job.settings
            settings = Settings.for_model(
                loaded,
                job.question,
                chunk_tokens=kept["chunk_tokens"],
                memory_tokens=kept["memory_tokens"],
                max_turns=kept.get("max_turns", 8),
            )
            return await _Run(store, job, loaded, inputs, settings, progress).run()


def _recheck(job: DigestJob) -> list[Input]:
    """The job's files, checked again; refused if any changed since the job started."""
    try:
        inputs = check_inputs([item["path"] for item in job.files])
    except UsageError as exc:
        raise type(exc)(f"cannot resume job {job.id}: {exc}") from None
    for item, before in zip(inputs, job.files, strict=True):
        if item.sha256 != before["sha256"]:
            raise UsageError(
                f"cannot resume job {job.id}: {item.path} changed since the job started (its SHA-256 differs); "
                "start a new job"
            )
    return inputs


class _model:
    """The model to use, loaded from a spec if need be (and then closed); yields `(model, spec)`."""

    def __init__(self, model: Model | str, context_window: int | None) -> None:
        self.given, self.context_window = model, context_window
        self.model: Model | None = None

    async def __aenter__(self) -> tuple[Model, str]:
        if isinstance(self.given, str):
            self.model = await load_model(self.given, context_window=self.context_window)
            return self.model, self.given
        return self.given, self.given.name

    async def __aexit__(self, *exc_info: object) -> None:
        if self.model is not None:
            with anyio.CancelScope(shield=True):
                await self.model.aclose()


class _Run:
    """One run of one job: load, pick, read, record; the row follows every step."""

    def __init__(
        self,
        store: Engine,
        job: DigestJob,
        model: Model,
        inputs: list[Input],
        settings: Settings,
        progress: ProgressHook | None,
    ) -> None:
        self.store, self.job, self.inputs, self.settings, self.hook = store, job, inputs, settings, progress
        self.jobs = DigestJobs(store, project=job.project)
        self.state = dict(job.state)
        self.model = MeteredModel(model, calls=self.state.get("model_calls", 0))
        self.started = time.monotonic()
        self.progress = Progress(job.id, job.strategy, "loading")

    async def run(self) -> dict[str, Any]:
        try:
            return await self._run()
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, anyio.get_cancelled_exc_class())):
                status, error = "interrupted", "interrupted (Ctrl-C, or the call was cancelled)"
            else:
                status, error = "failed", f"{type(exc).__name__}: {exc}"
            with anyio.CancelScope(shield=True):
                await self.jobs.stop(self.job.id, status, error)
            raise

    async def _run(self) -> dict[str, Any]:
        await self._report()
        config = session_config(self.settings.max_turns)
        session_in = open_session(self.model, self.store, config, on_turn=self._turn, project=self.job.project)
        async with session_in as session:
            return await self._in(session)

    async def _in(self, session: Session) -> dict[str, Any]:
        objects = await load_inputs(session.contexts, self.inputs)
        total = sum(obj.tokens for obj in objects)
        strategy, why = self.job.strategy, self.state.get("why", "as asked")
        if strategy == "auto":
            strategy, why = choose(total, self.job.question, self.model)
        self.state.update(why=why, tokens_total=total)
        await self.jobs.claim(self.job.id, strategy, self.state)
        chunks_total = max(1, math.ceil(total / self.settings.chunk_tokens)) if strategy == "stream" else 1
        self._progress(
            strategy=strategy,
            tokens_total=total,
            tokens_read=self.state.get("tokens_read", 0),
            chunks=self.state.get("chunk", 0),
            chunks_total=chunks_total,
            phase="reading",
        )
        await self._report()
        found: dict[str, Any] = {}

        async def work(brief: Brief) -> RunResult:
            result, outcome = await self._strategy(strategy, objects, session, brief)
            found["outcome"] = judged = await self._judged(outcome, session.contexts)
            if judged["status"] == outcome["status"] and judged["answer"] == outcome["answer"]:
                return result
            return dataclasses.replace(result, answer=judged["answer"], status="partial", reason=judged["reason"])

        run_id, _ = await session.run(self.job.question, source="digest", work=work)
        outcome = found["outcome"]
        record = {
            "answer": outcome["answer"],
            "evidence": outcome["evidence"],
            "strategy": strategy,
            "why": why,
            "tokens_read": outcome["tokens_read"],
            "tokens_total": total,
            "model_calls": self.model.calls,
            "wall_s": round(self._wall(), 3),
            "status": outcome["status"],
            "reason": outcome.get("reason"),
            "job_id": self.job.id,
            "run_id": run_id,
        }
        await self.jobs.finish(
            self.job.id, record, {**self.state, "model_calls": self.model.calls, "wall_s": self._wall()}
        )
        self._progress(phase="done", tokens_read=outcome["tokens_read"])
        await self._report()
        return record

    async def _strategy(
        self, strategy: str, objects: list[ContextObject], session: Session, brief: Brief
    ) -> tuple[RunResult, dict[str, Any]]:
        """The strategy's run result (for the run record) and its outcome (for the job's record)."""
        question = self.job.question
        if strategy == "navigate":
            return await navigate(session, objects, brief.question, notes=brief.text)
        if strategy == "direct":
            outcome = await direct(self.model, session.contexts, objects, question)
            return as_result(outcome), outcome
        reader = StreamReader(
            self.model, session.contexts, objects, question,
            self.settings.chunk_tokens, self.settings.memory_tokens, self._checkpoint,
            lookup=not GLOBAL.search(question),
        )  # fmt: skip
        answer, state = await reader.run(self.state)
        if found := [Found.from_json(item) for item in state.get("found", [])]:  # a lookup: from its lines
            messages = reader.answer_messages(state["memory"], found)
            answer = await from_evidence(self.model, messages, question, answer, found, state.get("counts"))
        outcome = {
            "answer": answer,
            "evidence": found_evidence(state, objects, question, answer) + evidence_of(state, objects),
            "tokens_read": state["tokens_read"],
            "status": "done",
        }
        return as_result(outcome), outcome

    async def _turn(self, _: Any) -> None:
        """A navigated turn ended: report the model calls so far (`_report` reads them)."""
        await self._report()

    async def _judged(self, outcome: dict[str, Any], contexts: ContextStore) -> dict[str, Any]:
        """The outcome with its answer judged against its evidence (`runtime.digest.verdict`)."""
        text = await evidence_text(contexts, outcome["evidence"])
        verdict = judge(self.job.question, outcome["answer"], text, lookup=not GLOBAL.search(self.job.question))
        reasons = [r for r in (outcome.get("reason"), verdict.reason) if r]
        status = "partial" if outcome["status"] != "done" or verdict.status != "done" else "done"
        return {**outcome, "answer": verdict.answer, "status": status, "reason": "; ".join(reasons) or None}

    async def _checkpoint(self, state: dict[str, Any]) -> None:
        self.state = state
        state.update(model_calls=self.model.calls, wall_s=self._wall())
        await self.jobs.checkpoint(self.job.id, state)
        chunks_total = max(self.progress.chunks_total, state["chunk"])
        self._progress(tokens_read=state["tokens_read"], chunks=state["chunk"], chunks_total=chunks_total)
        await self._report()

    def _progress(self, **changes: Any) -> None:
        """Where the job is now: a new `Progress`, so a report already handed out never changes."""
        self.progress = dataclasses.replace(self.progress, **changes)

    def _wall(self) -> float:
        return self.job.state.get("wall_s", 0.0) + time.monotonic() - self.started

    async def _report(self) -> None:
        if self.hook is None:
            return
        self._progress(model_calls=self.model.calls)
        outcome = self.hook(self.progress)  # a value, replaced at each step: the hook may keep it
        if inspect.isawaitable(outcome):
            await outcome
