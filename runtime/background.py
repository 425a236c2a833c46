"""The background worker inside a long-lived process (`loci serve`, `loci chat`).

`background_worker` starts a `memory.worker.Worker` over the evolution's job
queue in a task group beside the caller, and stops it when the block ends.
The worker reclaims the jobs a crashed process left, then runs the queue and
waits for more. A job that needs the model waits for the foreground to be
idle (`Evolution.foreground`), so a person's turn is never queued behind it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from memory.evolution import Evolution
from memory.worker import Worker

__all__ = ["background_worker"]


@asynccontextmanager
async def background_worker(evolution: Evolution, *, poll_s: float = 2.0) -> AsyncIterator[Worker]:
    worker = Worker(evolution.jobs, evolution.handlers(), poll_s=poll_s)
    async with anyio.create_task_group() as group:
        await group.start(worker.serve)
        try:
            yield worker
        finally:
            group.cancel_scope.cancel()
