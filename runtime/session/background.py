"""Background workers inside a process: which one a session runs, and running it beside the caller.

`session_worker` is the one place that decides which worker runs which jobs
for a session, from the session's `Background`:

- `OWN` (`loci run`, `run_task`, `loci digest`): beside a model that serves
  calls concurrently (a remote one) and with notes written in the
  background, a worker for the `note` jobs the session's own runs queue
  (`after`: only jobs newer than the session), so their notes are rewritten
  between and beside the turns; else none, and a fold keeps its extract.
- `ALL` (`loci chat`, a long-lived process): a worker for every kind its
  model can run: the memory graph's jobs (`Evolution.handlers`) and the
  `note` rewrites (`runtime.prompt.notes.NoteRefiner`). A job that needs a
  local model waits for the foreground to be idle, so a person's turn is
  never queued behind it.
- `CALLER` (the benchmarks): no worker; the note jobs are queued and the
  caller runs them itself (`runtime.prompt.notes.rewrite_queued`).

`background_worker` starts a `memory.jobs.worker.Worker` in a task group
beside the caller, and stops it when the block ends. The worker reclaims the
jobs a crashed process left, then runs the queue and waits for more.
`loci serve` runs the memory graph's jobs this way.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio

from loci.memory.context.store import ContextStore
from loci.memory.evolution.evolution import Evolution
from loci.memory.jobs.queue import Jobs
from loci.memory.jobs.worker import Handler, Worker
from loci.runtime.models.base import Model, is_serial
from loci.runtime.prompt.notes import NOTE_JOB, NoteMode, NoteQueue, NoteRefiner

__all__ = ["Background", "SessionWorker", "background_worker", "serving", "session_worker"]


class Background(enum.Enum):
    """Who runs a session's background jobs (`session_worker` decides from it)."""

    OWN = "own"
    ALL = "all"
    CALLER = "caller"


@dataclass(frozen=True)
class SessionWorker:
    """What `session_worker` decided: the worker to run beside the session (or None), and where notes queue."""

    worker: Worker | None
    notes: NoteQueue | None


async def session_worker(
    background: Background, model: Model, note_mode: NoteMode, contexts: ContextStore, evolution: Evolution
) -> SessionWorker:
    """The worker a session runs and the queue its folds' note rewrites go to, built before the agent is."""
    jobs = evolution.jobs
    notes: dict[str, Handler] = {NOTE_JOB: NoteRefiner(model, contexts, jobs, evolution.foreground)}
    if background is Background.ALL:
        worker = Worker(jobs, {**evolution.handlers(), **notes})
    elif background is Background.OWN and not is_serial(model) and note_mode is NoteMode.BACKGROUND:
        worker = Worker(jobs, notes, after=await jobs.last_id())
    else:
        queue = NoteQueue(jobs, _nobody) if background is Background.CALLER else None
        return SessionWorker(None, queue)
    return SessionWorker(worker, NoteQueue(jobs, worker.wake))


def _nobody() -> None:
    """The wake of a queue whose jobs the caller runs itself."""


@asynccontextmanager
async def background_worker(
    jobs: Jobs, handlers: dict[str, Handler], *, poll_s: float = 2.0, after: int = 0
) -> AsyncIterator[Worker]:
    """A worker over `jobs` with `handlers`, running beside the caller for the block."""
    async with serving(Worker(jobs, handlers, poll_s=poll_s, after=after)) as worker:
        yield worker


@asynccontextmanager
async def serving(worker: Worker) -> AsyncIterator[Worker]:
    """Run an already built `worker` beside the caller for the block."""
    try:
        async with anyio.create_task_group() as group:
            await group.start(worker.serve)
            try:
                yield worker
            finally:
                group.cancel_scope.cancel()
    except BaseExceptionGroup as failed:
        # The worker ends only by cancellation, so the one error here is the caller's: raise it as it was raised.
        if len(failed.exceptions) == 1:
            raise failed.exceptions[0] from None
        raise
