"""`loci worker`: run the queued background jobs without serving, until stopped.

    loci worker [--db HOME] [--project P | --all-projects] [--once] [--kinds K,K] [--lease S] [--poll S]

A worker claims the jobs of one project (`--all-projects`: of every project)
from the home's queue and runs each with the handler for its kind, the same
`memory.jobs.worker.Worker` that `loci serve` runs beside its server. Any
number of workers (and servers) may share one home: a claim takes each job
once (memory/jobs/queue.py), and a job whose worker died is claimed again
when its lease runs out, or at once when its process is seen to be gone on
the same host. `--lease` is how long the jobs this worker claims stay its
own when it cannot be seen to die (from another machine).

The kinds are those a process without a model runs (`Evolution.handlers`:
`refine`), narrowed by `--kinds`; every handler runs on both engines. On
PostgreSQL the worker waits for a
queued job's `NOTIFY` (memory/engines/postgres/listen.py) and polls every
`--poll` seconds besides, for the jobs a dead worker left; on SQLite it polls.

Without `--once` it runs until stopped: the first SIGINT or SIGTERM lets the
job in hand finish, the second gives it back to the queue unspent; either
way it exits 0. Once it takes those signals it says on stderr what it runs,
where, and until when. With `--once` it runs the queue until it is empty (jobs
queued meanwhile included) and exits. It ends with one line: what it ran
and what the queue holds.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from contextlib import AsyncExitStack
from typing import Any

import anyio
import anyio.abc

from loci.memory.errors import UsageError
from loci.memory.jobs.limits import DEFAULT_LIMITS, JobLimits
from loci.runtime.cli.flags import add_project, at_least, project_of
from loci.runtime.cli.home import open_home

__all__ = ["register", "runnable"]

log = logging.getLogger("loci.jobs")

POLL_S = 5.0


def register(sub: Any) -> None:
    parser = sub.add_parser("worker", help="run queued background jobs without serving, until stopped")
    parser.add_argument(
        "--db", default=None, help="the Loci home: a SQLite file or postgresql://... (default: $LOCI_HOME/loci.db)"
    )
    add_project(parser, every=True)
    parser.add_argument("--once", action="store_true", help="run the queued jobs until none is left, then exit")
    parser.add_argument("--kinds", default=None, help="run only these job kinds, comma-separated (default: all)")
    parser.add_argument(
        "--lease",
        type=float,
        default=DEFAULT_LIMITS.lease_s,
        help="seconds a claimed job stays this worker's if it cannot be seen to die"
        f" (default: {DEFAULT_LIMITS.lease_s:g})",
    )
    parser.add_argument(
        "--poll", type=float, default=POLL_S, help=f"seconds between looks at the queue (default: {POLL_S:g})"
    )
    parser.set_defaults(handler=handle)


def runnable(handlers: dict[str, Any], wanted: list[str] | None) -> dict[str, Any]:
    """The handlers a worker runs: those of `wanted`, if given, else all; a kind with no handler is a `UsageError`."""
    unknown = [kind for kind in wanted or () if kind not in handlers]
    if unknown:
        raise UsageError(f"--kinds: no handler for {', '.join(unknown)}; this worker runs {', '.join(handlers)}")
    return {kind: run for kind, run in handlers.items() if wanted is None or kind in wanted}


async def handle(args: argparse.Namespace) -> int:
    from loci.memory.evolution.evolution import Evolution
    from loci.memory.graph.graph import Graph
    from loci.memory.jobs.queue import Jobs
    from loci.memory.jobs.worker import Worker

    at_least(0.01, poll=args.poll, lease=args.lease)
    project = project_of(args)
    wanted = [kind.strip() for kind in args.kinds.split(",") if kind.strip()] if args.kinds is not None else None
    async with AsyncExitStack() as stack:
        store = await stack.enter_async_context(open_home(args.db))
        limits = JobLimits(DEFAULT_LIMITS.max_attempts, args.lease)
        evolution = Evolution(Graph(store, project=project), jobs=Jobs(store, limits, project=project))
        handlers = runnable(evolution.handlers(), wanted)
        listener = None if args.once else await _listener(store, stack)
        worker = Worker(evolution.jobs, handlers, poll_s=args.poll, listener=listener)
        whose = "every project" if project is None else f"project {project}"
        until = "the queue is empty" if args.once else "stopped"
        ready = f"loci worker: running {', '.join(handlers)} jobs of {whose} in {store.location} until {until}"
        ran = await _run(worker, once=args.once, ready=ready)
        queue = await evolution.jobs.counts()
    given_back = ran["deferred"]
    print(
        f"ran {ran['done']} jobs ({ran['retry']} to retry, {ran['failed']} failed, {ran['lost']} lost,"
        f" {given_back} given back); queue: {queue}"
    )
    return 0


async def _listener(store: Any, stack: AsyncExitStack) -> Any:
    """The home's listener for queued jobs (PostgreSQL's `LISTEN`), closed with the stack; None where the engine
    has none (SQLite: the worker polls)."""
    from loci.memory.jobs.queue import JOBS_CHANNEL

    listener = await store.listen(JOBS_CHANNEL)
    if listener is not None:
        stack.push_async_callback(listener.aclose)
    return listener


async def _run(worker: Any, *, once: bool, ready: str) -> dict[str, int]:
    """Run `worker` (its queue once, or until stopped), stopping it gently on the first signal, at once on the
    second; `ready` goes to stderr once the signals are taken."""
    async with anyio.create_task_group() as group:
        await group.start(_stop_on_signal, worker, group.cancel_scope)
        print(ready, file=sys.stderr, flush=True)
        if once:
            await worker.drain()
        else:
            await worker.serve()
        group.cancel_scope.cancel()
    return dict(worker.ran)


async def _stop_on_signal(
    worker: Any, scope: anyio.abc.CancelScope, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for _ in signals:
            if worker.stopping:
                scope.cancel()  # the second signal: the job in hand goes back to the queue, unspent
                return
            log.warning("stopping after the job in hand (again to stop at once)")
            worker.stop()
