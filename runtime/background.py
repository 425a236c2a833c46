"""Background workers inside a process: `background_worker` runs one beside the caller.

It starts a `memory.jobs.worker.Worker` over a job queue, with one handler per
job kind, in a task group beside the caller, and stops it when the block
ends. The worker reclaims the jobs a crashed process left, then runs the
queue and waits for more. Two processes use it:

- `loci serve` and `loci chat` run the memory graph's jobs
  (`Evolution.handlers`); `loci chat` adds the `note` rewrites of its
  session's model (`runtime.prompt.notes.NoteRefiner`). A job that needs a local
  model waits for the foreground to be idle, so a person's turn is never
  queued behind it.
- `open_session`, beside a model that serves calls concurrently, runs the
  `note` jobs its own runs queue (`after`: only jobs newer than the session),
  so their notes are rewritten between and beside the turns.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from memory.jobs.queue import Jobs
from memory.jobs.worker import Handler, Worker

__all__ = ["background_worker"]


@asynccontextmanager
async def background_worker(
    jobs: Jobs, handlers: dict[str, Handler], *, poll_s: float = 2.0, after: int = 0
) -> AsyncIterator[Worker]:
    worker = Worker(jobs, handlers, poll_s=poll_s, after=after)
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
