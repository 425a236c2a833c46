"""The background worker: an anyio task that runs jobs from the persisted queue.

`Worker.serve` runs inside the long-lived processes (`loci serve`, `loci
chat`) beside the foreground: it claims a job, hands it to the handler for
its kind, and on an empty queue waits for `wake()` or a short poll. `drain`
runs the queue once and returns (`loci memory refine`). A handler writes its
effect with `Jobs.complete`, so a job's effect and its `done` are one
transaction; an exception records a failed attempt with its error, and the
job is retried until its attempts run out; each failure is logged (`loci.jobs`). A handler that raises
`JobDeferred` gives its job back to the queue without spending an attempt,
as does a worker cancelled in the middle of a job.

A home that is unavailable (`StoreUnavailable`: PostgreSQL down or
restarting, a connection lost, a SQLite lock held past the busy timeout)
never ends `serve`: it logs one line (`the home is unavailable …; the
worker tries again in N s`), waits, doubling the wait from `BACKOFF_S` up to
`MAX_BACKOFF_S`, and goes on where it was; a job in hand when the home went
away is given back to the queue, its attempt unspent, once the home is
back (a job failing on an unavailable home is not the job's fault). A
listener whose connection is lost is opened again by its next `wait`;
until then the worker polls.

Between jobs, `serve` waits on an empty queue for `wake()` (work queued in
this process), for its `Listener` when it was built with one (PostgreSQL's
`LISTEN`, memory/engines/postgres/listen.py: work queued by any process), or
for `poll_s`, whichever comes first; after the poll it reclaims the jobs a
dead worker left, and goes on at once when it put any back. `stop()` ends
`serve` and `drain` after the job in hand (`loci worker` on SIGTERM).

`Foreground` is how the worker yields to the turns of a local model: the
session marks each run with `async with foreground.turn()`, and a job that
needs the model (a language step) first awaits `foreground.wait_idle()`.
Database writes need no such gate: they are short transactions through the
store's one writer, which the foreground's writes queue behind only briefly.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Protocol

import anyio
import anyio.abc
import anyio.lowlevel

from loci.memory.errors import StoreUnavailable
from loci.memory.jobs.queue import Job, JobDeferred, JobLost, Jobs

__all__ = ["BACKOFF_S", "MAX_BACKOFF_S", "Foreground", "Handler", "Listener", "Worker"]

log = logging.getLogger("loci.jobs")

Handler = Callable[[Job], Awaitable[object]]
POLL_S = 2.0
BACKOFF_S = 0.5  # the first wait after the home was found unavailable; each next one doubles
MAX_BACKOFF_S = 30.0


class Listener(Protocol):
    """Wakes a waiting worker when another process queues a job."""

    async def wait(self, timeout: float) -> bool:
        """Wait for the next announced job (True) or `timeout` seconds (False)."""
        ...


class Foreground:
    """Counts the foreground turns in progress; background model calls wait until there are none."""

    def __init__(self) -> None:
        self._busy = 0
        self._idle = anyio.Event()
        self._idle.set()

    @property
    def busy(self) -> bool:
        return self._busy > 0

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        self._busy += 1
        if self._idle.is_set():
            self._idle = anyio.Event()
        try:
            yield
        finally:
            self._busy -= 1
            if self._busy == 0:
                self._idle.set()

    async def wait_idle(self) -> None:
        while self._busy:
            await self._idle.wait()


class Worker:
    """Runs the jobs of one queue with one handler per job kind."""

    def __init__(
        self,
        jobs: Jobs,
        handlers: dict[str, Handler],
        *,
        poll_s: float = POLL_S,
        after: int = 0,
        listener: Listener | None = None,
    ) -> None:
        self.jobs = jobs
        self.handlers = handlers
        self.poll_s = poll_s
        self.listener = listener
        self.stopping = False
        self.after = after  # claim only jobs with a higher id (a session's own worker: the jobs it queued)
        self.ran: dict[str, int] = {"done": 0, "retry": 0, "failed": 0, "lost": 0, "deferred": 0}
        self.outages = 0  # times the home was found unavailable
        self._wake = anyio.Event()
        self._backoff = 0.0
        self._in_hand: Job | None = None  # a job claimed when the home went away: given back once it is back

    def wake(self) -> None:
        """New work was queued: stop waiting for the next poll."""
        self._wake.set()

    def stop(self) -> None:
        """Finish the job in hand, then return from `serve` or `drain` instead of claiming another."""
        self.stopping = True
        self._wake.set()

    async def run_one(self) -> bool:
        """Claim and run one job; False when the queue has none to give (or the worker is stopping)."""
        if self.stopping:
            return False
        if self._in_hand is not None:
            await self.jobs.release(self._in_hand, "the home was unavailable during the job")
            self._in_hand = None
        job = await self.jobs.claim(tuple(self.handlers), after=self.after)
        if job is None:
            return False
        self._in_hand = job
        try:
            await self.handlers[job.kind](job)
        except JobLost:
            self.ran["lost"] += 1
        except JobDeferred as exc:
            await self.jobs.release(job, str(exc))
            self.ran["deferred"] += 1
        except StoreUnavailable:
            raise  # the job stays in hand, given back once the home is back
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):  # the worker is stopping: the job goes back, unspent
                await self.jobs.release(job, "the worker stopped during the job")
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of a job is kept in its row and retried
            error = f"{type(exc).__name__}: {exc}"
            status = await self.jobs.fail(job, error)
            self.ran["failed" if status == "failed" else "retry"] += 1
            then = {"failed": "no attempt left", "queued": "queued again", "lost": "no longer this worker's"}[status]
            log.warning("job %d (%s) failed on attempt %d: %s; %s", job.id, job.kind, job.attempts, error, then)
        else:
            self.ran["done"] += 1
        self._in_hand = None
        return True

    async def drain(
        self, max_jobs: int | None = None, *, on_job: Callable[[int], Awaitable[None]] | None = None
    ) -> dict[str, int]:
        """Run queued jobs (after reclaiming those a dead worker left) until none is left; `on_job` is told
        how many have run after each."""
        await self.jobs.reclaim()
        count = 0
        while (max_jobs is None or count < max_jobs) and await self.run_one():
            count += 1
            if on_job is not None:
                await on_job(count)
        return dict(self.ran)

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run jobs until cancelled or stopped; start it in a task group beside the foreground. An unavailable
        home is waited out (`_back_off`), never raised."""
        try:
            await self.jobs.reclaim()
        except StoreUnavailable as exc:
            self._unavailable(exc)  # started all the same: the loop waits for the home
        task_status.started()
        while not self.stopping:
            self._wake = anyio.Event()  # reset before looking, so a wake during the look is not lost
            try:
                if self._backoff:
                    await self._back_off()
                if await self.run_one():
                    self._backoff = 0.0
                    await anyio.lowlevel.checkpoint()
                    continue
                if await self.jobs.reclaim() or self.stopping:
                    continue
                self._backoff = 0.0
            except StoreUnavailable as exc:
                self._unavailable(exc)
                continue
            await self._idle()

    def _unavailable(self, exc: StoreUnavailable) -> None:
        self.outages += 1
        self._backoff = min(MAX_BACKOFF_S, self._backoff * 2 or BACKOFF_S)
        log.warning("the home is unavailable (%s); the worker tries again in %g s", exc, self._backoff)

    async def _back_off(self) -> None:
        """Wait out the current backoff, or until `stop()`."""
        with anyio.move_on_after(self._backoff):
            while not self.stopping:
                await self._wake.wait()
                self._wake = anyio.Event()

    async def _idle(self) -> None:
        """Wait for a wake, the listener's notification or the poll, whichever comes first."""
        with anyio.move_on_after(self.poll_s):
            if self.listener is None:
                await self._wake.wait()
                return
            async with anyio.create_task_group() as group:
                group.start_soon(self._first, group, self._wake.wait)
                group.start_soon(self._first, group, self._notified)

    async def _notified(self) -> None:
        assert self.listener is not None
        pause = BACKOFF_S
        while True:  # bounded by `_idle`'s poll
            try:
                await self.listener.wait(self.poll_s)
                return
            except StoreUnavailable as exc:  # its next wait listens again, on a new connection
                log.warning("the worker's listener lost the home (%s); listening again in %g s", exc, pause)
                await anyio.sleep(pause)
                pause = min(MAX_BACKOFF_S, pause * 2)

    @staticmethod
    async def _first(group: anyio.abc.TaskGroup, wait: Callable[[], Awaitable[object]]) -> None:
        await wait()
        group.cancel_scope.cancel()
