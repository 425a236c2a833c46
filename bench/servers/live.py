"""`loci bench live`: write on one server, hear it on a client of another (`subscriptions/listen`, servers/live.py).

Two `loci serve --http --tools memory` over one home (a SQLite file; then a
PostgreSQL database on a cluster of the run's own, or `--pg`'s). A client of
server B listens on the project's recent changes (`loci://memory/changes`);
a client of server A remembers `--writes` (50) facts one after another, and
for each the bench times from sending the write to hearing the change on B.
Goal: p50 at most `GOAL_MS`; each engine reports p50, p95 and p90 and the max.

How B learns of a change is the engine's (servers/live.py): on SQLite it
reads the change record every `POLL_S`, and since the writes follow one
another as soon as each is heard, each lands just after a read and waits
about a whole `POLL_S` (the figure is near the worst case of the interval,
not its average); on PostgreSQL the writing transaction notifies B when it
commits (`NOTIFY`), and B reads then. Beside it, the floor: the write
call's own round trip on A (the change cannot be heard before it commits,
which is inside that call), and the poll interval of SQLite's listening
server, which bounds what it adds there. The plain way a client would
follow changes without a stream, reading the changes resource every
second, waits half a second on average; the bench reports that figure from
the same interval (`poll_1s_expected_ms`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from loci.bench.servers.mcp import http_server
from loci.bench.servers.postgres_cluster import cluster
from loci.memory.engines.select import use_engine
from loci.memory.errors import UsageError
from loci.runtime.cli.doctor import cpu_name
from loci.servers.live import CHANGES_URI, POLL_S

__all__ = ["GOAL_MS", "add_arguments", "run"]

GOAL_MS = 200


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--writes", type=int, default=50, help="facts remembered on server A, one at a time")
    parser.add_argument("--pg", default=None, help="a PostgreSQL server to make the database in (else a cluster)")
    parser.add_argument("--engines", default="sqlite,postgresql", help="which engines to measure")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"cpu": cpu_name(), "load": os.getloadavg()[0], "writes": args.writes}
    result |= {"goal_p50_ms": GOAL_MS, "sqlite_server_poll_ms": POLL_S * 1000, "poll_1s_expected_ms": 500}
    result |= {"postgresql_told_by": "NOTIFY"}
    with tempfile.TemporaryDirectory(prefix="loci-bench-live-") as tmp:
        homes: dict[str, Callable[[ExitStack], str]] = {  # where each engine named in --engines keeps its home
            "sqlite": lambda _: str(Path(tmp) / "live.db"),
            "postgresql": lambda stack: _pg_database(stack, args.pg),
        }
        engines = args.engines.split(",")
        if unknown := [name for name in engines if name not in homes]:
            raise UsageError(f"--engines takes {' and '.join(homes)}, not {', '.join(unknown)}")
        for engine in engines:
            with ExitStack() as stack:
                result[engine] = await _measure(homes[engine](stack), args.writes)
    return result


def _pg_database(stack: ExitStack, server: str | None) -> str:
    """A new database on `--pg`'s server, or on a cluster of this run's own (stopped with `stack`)."""
    import psycopg

    url = server or stack.enter_context(cluster())
    name = f"loci_live_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return url.rsplit("/", 1)[0].split("?", 1)[0] + f"/{name}"


def _http_client(url: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30.0, read=300.0))
    return Client(streamable_http_client(url, http_client=http))


async def _measure(db: str, writes: int) -> dict[str, Any]:
    async with use_engine(db):
        pass  # made once, before either server opens it
    served = db if "://" in db else Path(db)  # a URL stays as written (a Path would fold its "//")
    with http_server(served) as (url_a, token_a), http_server(served) as (url_b, token_b):  # type: ignore[arg-type]
        async with (
            _http_client(url_a, token_a) as writer,
            _http_client(url_b, token_b) as listener,
            listener.listen(resource_subscriptions=[CHANGES_URI]) as stream,
        ):
            heard, calls = [], []
            for i in range(writes):
                sent = time.perf_counter()
                await writer.call_tool("memory_remember", {"text": f"live fact number {i} of the bench"})
                calls.append(time.perf_counter() - sent)
                with anyio.fail_after(10):
                    await anext(stream)
                heard.append(time.perf_counter() - sent)
    return {"write_to_event_ms": _stats(heard), "write_call_ms": _stats(calls)}


def _stats(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50": round(statistics.median(ordered) * 1000, 1),
        "p90": round(ordered[int(0.9 * (len(ordered) - 1))] * 1000, 1),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 1),
        "max": round(ordered[-1] * 1000, 1),
    }
