"""`loci bench team`: HTTP servers over one PostgreSQL, many clients, mixed calls; one server, two and four.

A team server is several `loci serve memory --http` processes over one
PostgreSQL database behind a load balancer. This benchmark starts a cluster
of its own (bench/servers/postgres_cluster.py, as the tests do) or takes `--db`, a
server whose user may create databases, and runs the same load once per
count of `--servers` (1, 2 and 4), each time on a new database seeded with
the same `--nodes` memories, the clients dealt to the servers in turn as a
round-robin balancer would. Each server is held to `--quota` of a core (a
quarter by default), as on a small machine of its own, so that what a second
server adds is not hidden by the database and the clients using the same
cores; and the whole run (this process, its clients, the cluster it starts)
sits in a cgroup of its own weighted far above other work
(bench/servers/cpu_quota.py), so that on a shared machine the database and
the clients get the CPU they need. Where no CPU controller is writable the
benchmark stops with one line saying so (`--quota 0` runs the servers
unheld, as the ratio a shared machine allows). `--clients` clients (16) make
`--calls` calls each (500), `memory_recall` (k=5, two words from the seed's
sentences) or, with probability `--writes` (0.4), `memory_remember` of a
text of its own. Each client speaks streamable HTTP with the servers' bearer
token through `WireClient` (bench/servers/wire.py, written by hand, so the
load costs a fraction of a server's call); each server answers one recall
before the clock starts (what its first call loads is start-up, not load).
`TeamClient` is the same session over an `httpx.AsyncClient`, for tests
that hold a server through restarts and kills.

It reports, per run, the calls per second, the errors, the p50 and p95 of
each kind of call, and the writes acknowledged beside the rows found in the
database afterwards (equal when nothing was lost or written twice); then the
ratio of each run's throughput to one server's. With `--rounds N` the runs
are made N times in turn, and the run of median throughput of each is reported (a
busy machine's other work comes and goes). The floor beside them is the same load on
one server over a SQLite home (the default a user starts from). The output
names the machine's CPU, cores and load. Beside the time it reports what
limits the load (bench/servers/team_usage.py): the cores the servers, the
database's backends, the clients and other work kept busy (`cores_busy`, and
per call `cpu_ms_per_call`), what each server got against its quota
(`each_server`: its cores, and the share of its quota's periods in which it
used all of it and waited), and what the database's connections were doing
(`database_connections`: running a statement, waiting on a lock, holding a
transaction open while their server computes the next statement, or idle in
the pool).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx

from loci.bench.recall.memory import make_sentences
from loci.bench.servers.cpu_quota import WEIGHT, CpuQuotas, QuotaUnavailable
from loci.bench.servers.mcp import http_server
from loci.bench.servers.team_usage import Usage, sample_waits, shares
from loci.bench.servers.wire import WireClient, WireError
from loci.memory.engines.select import use_engine
from loci.memory.errors import UsageError
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.location import is_postgres, shown
from loci.runtime.cli.doctor import cpu_name

__all__ = ["GOALS", "TeamClient", "add_arguments", "run"]

GOALS = {"errors": 0, "two_over_one": 1.8, "four_over_one": 3.2}
QUOTA = 0.25  # of a core, each server's by default
CALL_S = 60.0  # the longest a call may wait for its answer before it counts as an error
PROTOCOL = "2025-06-18"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=None, help="a PostgreSQL server whose user creates databases")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients")
    parser.add_argument("--calls", type=int, default=500, help="calls per client")
    parser.add_argument("--writes", type=float, default=0.4, help="share of calls that are memory_remember")
    parser.add_argument("--nodes", type=int, default=2_000, help="memories in each database before the load")
    parser.add_argument("--no-sqlite", action="store_true", help="skip the one server over a SQLite home")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each count of servers, taken in turn")
    parser.add_argument("--servers", default="1,2,4", help="the counts of servers to run, comma-separated")
    parser.add_argument(
        "--quota", type=float, default=QUOTA, help=f"of a core each server may use (default {QUOTA}; 0: unheld)"
    )
    parser.add_argument("--seed", type=int, default=7)


class TeamClient:
    """One MCP session over streamable HTTP: `open` (initialize), then `call(tool, arguments)` for its result; a
    call `at` another server's URL goes there instead (a stateless server's client may call any server)."""

    def __init__(self, http: httpx.AsyncClient, url: str, token: str | None = None) -> None:
        self.http = http
        self.url = url
        self.headers = {**ACCEPT, **({"Authorization": f"Bearer {token}"} if token else {})}
        self._next = 0

    async def open(self) -> None:
        params = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench-team", "version": "1"}}
        response = await self._post({"jsonrpc": "2.0", "id": self._id(), "method": "initialize", "params": params})
        session = response.headers.get("mcp-session-id")  # none from a stateless server
        self.headers = {**self.headers, "mcp-protocol-version": PROTOCOL}
        if session is not None:
            self.headers["mcp-session-id"] = session
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self, tool: str, arguments: dict[str, Any], *, at: str | None = None) -> dict[str, Any]:
        """The tool's result (`structuredContent`, `isError`), or an error raised when the call got no answer."""
        body = {"jsonrpc": "2.0", "id": self._id(), "method": "tools/call"}
        body["params"] = {"name": tool, "arguments": arguments}
        return _message(await self._post(body, at))["result"]

    def _id(self) -> int:
        self._next += 1
        return self._next

    async def _post(self, body: dict[str, Any], at: str | None = None) -> httpx.Response:
        response = await self.http.post(at or self.url, json=body, headers=self.headers)
        response.raise_for_status()
        return response


def _message(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response, sent as JSON or as one server-sent event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()


@dataclass
class Load:
    """What the clients of one run did."""

    recall_s: list[float] = field(default_factory=list)
    remember_s: list[float] = field(default_factory=list)
    errors: int = 0
    acknowledged: list[str] = field(default_factory=list)  # the ids of the writes a server acknowledged


async def _client(url: str, token: str, plan: list[tuple[str, dict[str, Any]]], load: Load) -> None:
    async with WireClient.connect(url, token) as client:
        with anyio.fail_after(CALL_S):
            await client.open()
        for tool, arguments in plan:
            t0 = time.perf_counter()
            try:
                with anyio.fail_after(CALL_S):
                    result = await client.call(tool, arguments)
            except WireError:
                load.errors += 1
                continue
            (load.recall_s if tool == "memory_recall" else load.remember_s).append(time.perf_counter() - t0)
            if result.get("isError"):
                load.errors += 1
            elif tool == "memory_remember":
                load.acknowledged.append(result["structuredContent"]["id"])


def _plans(args: argparse.Namespace, words: list[str], tag: str) -> list[list[tuple[str, dict[str, Any]]]]:
    rng = random.Random(args.seed)
    plans = []
    for c in range(args.clients):
        plan: list[tuple[str, dict[str, Any]]] = []
        for i in range(args.calls):
            if rng.random() < args.writes:
                text = f"{tag} note {c}-{i}: {rng.choice(words)} {rng.choice(words)} {rng.choice(words)}"
                plan.append(("memory_remember", {"text": text}))
            else:
                plan.append(("memory_recall", {"query": f"{rng.choice(words)} {rng.choice(words)}", "k": 5}))
        plans.append(plan)
    return plans


async def _seed(db: str, sentences: list[str]) -> None:
    async with use_engine(db) as store:
        graph = Graph(store)
        for start in range(0, len(sentences), 1_000):
            await graph.add_many([NewNode(text) for text in sentences[start : start + 1_000]], cause="bench")


async def _stored(db: str, tag: str) -> int:
    async with use_engine(db) as store:
        sql = "SELECT count(*) FROM memory_nodes WHERE text LIKE ? AND deleted IS NULL"
        return int((await store.read(lambda conn: conn.execute(sql, [f"{tag} note %"]).fetchone()))[0])


async def _one_run(
    args: argparse.Namespace, db: str, servers: int, sentences: list[str], words: list[str], quotas: Any = None
) -> dict:
    await _seed(db, sentences)
    tag = f"run-{uuid.uuid4().hex[:8]}"
    load = Load()
    with ExitStack() as stack:
        made = [http_server(db) for _ in range(servers)]
        served = [stack.enter_context(server) for server in made]
        pids = [server.process.pid for server in made]
        groups = [quotas.hold(pid, args.quota) for pid in pids] if quotas is not None else []
        await _warm(served, words)
        periods = [quotas.throttled(group) for group in groups]
        before = Usage.take(pids, db)
        t0 = time.perf_counter()
        waits = await _drive(db, served, _plans(args, words, tag), load)
        elapsed = time.perf_counter() - t0
        after = Usage.take(pids, db)
        if quotas is not None:
            periods = [_less(quotas.throttled(group), then) for group, then in zip(groups, periods, strict=True)]
    for group in groups:
        quotas.release(group)
    calls = len(load.recall_s) + len(load.remember_s)
    return {
        "servers": servers,
        "calls": calls,
        "errors": load.errors,
        "calls_per_s": round(calls / elapsed, 1),
        "seconds": round(elapsed, 1),
        # CPU seconds per second of the load: the servers (1.0 is one core), the database's backends for this
        # database (PostgreSQL only), the clients (this process), and the rest of the machine's busy time.
        "cores_busy": (busy := after.busy(before, elapsed)),
        "cpu_ms_per_call": {
            part: round(cores * elapsed / max(calls, 1) * 1000, 2)
            for part, cores in busy.items()
            if part != "other_work"
        },
        "each_server": _held(after.each_server(before, elapsed), periods, args.quota if quotas else None),
        "database_connections": shares(waits),
        "recall_p50_ms": _ms(load.recall_s, 50),
        "recall_p95_ms": _ms(load.recall_s, 95),
        "remember_p50_ms": _ms(load.remember_s, 50),
        "remember_p95_ms": _ms(load.remember_s, 95),
        "writes_acknowledged": len(load.acknowledged),
        "writes_acknowledged_distinct": len(set(load.acknowledged)),
        "rows_stored": await _stored(db, tag),
    }


async def _drive(db: str, served: list[tuple[str, str]], plans: list[list[tuple[str, dict]]], load: Load) -> Counter:
    """Every client's plan, dealt to the servers in turn, while the database's connections are sampled."""
    waits: Counter[str] = Counter()
    async with anyio.create_task_group() as outer:
        outer.start_soon(sample_waits, db, waits)
        async with anyio.create_task_group() as group:
            for n, plan in enumerate(plans):
                url, token = served[n % len(served)]
                group.start_soon(_client, url, token, plan, load)
        outer.cancel_scope.cancel()
    return waits


async def _warm(served: list[tuple[str, str]], words: list[str]) -> None:
    """One recall of each server, not counted: a server serves before its first call has loaded what calls use,
    which held to its quota takes seconds, and those seconds are start-up, not load."""
    async with anyio.create_task_group() as group:
        for url, token in served:
            group.start_soon(_client, url, token, [("memory_recall", {"query": words[0], "k": 5})], Load())


def _less(now: tuple[int, int], then: tuple[int, int]) -> tuple[int, int]:
    return now[0] - then[0], now[1] - then[1]


def _held(cores: list[float], periods: list[tuple[int, int]], quota: float | None) -> dict[str, Any]:
    """What each server got: its cores, its quota and, held to one, the share of its quota's periods in which it
    used the whole quota and had to wait (near 1: the quota was its limit; near 0: something else was)."""
    held: dict[str, Any] = {"cores": cores, "quota": quota}
    if periods:
        held["throttled"] = [round(throttled / max(total, 1), 2) for total, throttled in periods]
    return held


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median throughput (of an even number, the lower)."""
    return sorted(runs, key=lambda r: r["calls_per_s"])[(len(runs) - 1) // 2]


def _ms(times: list[float], percentile: int) -> float | None:
    if len(times) < 2:
        return None
    return round(statistics.quantiles(times, n=100)[percentile - 1] * 1000, 2)


@contextmanager
def _server(db: str | None) -> Iterator[str]:
    """The PostgreSQL server to make the databases in: `--db`'s, or a cluster of this run's own."""
    if db is not None:
        yield db
        return
    from loci.bench.servers.postgres_cluster import cluster

    with cluster() as url:
        yield url


def _database(server: str, name: str) -> str:
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server.rsplit("/", 1)[0].split("?", 1)[0] + f"/{name}"


def _drop(server: str, name: str) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _counts(text: str) -> list[int]:
    try:
        counts = sorted({int(n) for n in text.split(",") if n.strip()})
    except ValueError:
        counts = []
    if not counts or counts[0] != 1:
        raise UsageError(f"--servers {text!r}: counts of servers, comma-separated, 1 among them (such as 1,2,4)")
    return counts


def _quota_said(cores: float, quotas: CpuQuotas | None, db: str | None) -> str:
    if quotas is None:
        return "none: the servers unheld, the run weighted as any other work on the machine"
    name, weight = WEIGHT[quotas.version]
    where = "the clients" + ("" if db else " and the PostgreSQL cluster")
    return (
        f"{cores:g} of a core per server (cgroup v{quotas.version}), each in a child of the run's cgroup"
        f" ({name} {weight}, so other work on the machine yields to it), with {where}"
    )


def _quotas(cores: float) -> CpuQuotas | None:
    if cores <= 0:
        return None
    try:
        return CpuQuotas.find()
    except QuotaUnavailable as exc:
        raise UsageError(f"cannot hold each server to --quota {cores:g} of a core: {exc} (or give --quota 0)") from exc


async def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.db is not None and not is_postgres(args.db):
        raise UsageError("--db is a PostgreSQL server for this benchmark: postgresql://USER@HOST:PORT/DB")
    if min(args.clients, args.calls, args.nodes, args.rounds) < 1 or not 0 <= args.writes <= 1:
        raise UsageError("--clients, --calls, --nodes and --rounds are at least 1, and --writes is between 0 and 1")
    counts = _counts(args.servers)
    sentences = make_sentences(args.nodes, args.seed)
    words = sorted({w for s in sentences for w in s.split() if len(w) > 3})
    result: dict[str, Any] = {"clients": args.clients, "calls_per_client": args.calls, "writes": args.writes}
    quotas = _quotas(args.quota)
    result["quota"] = _quota_said(args.quota, quotas, args.db)
    by_servers: dict[int, list[dict[str, Any]]] = {n: [] for n in counts}
    with quotas or ExitStack():  # first, so that the cluster started next is in the run's cgroup too
        with _server(args.db) as server:
            for _ in range(args.rounds):
                for servers in counts:
                    name = f"loci_team_{uuid.uuid4().hex[:10]}"
                    db = _database(server, name)
                    try:
                        by_servers[servers].append(await _one_run(args, db, servers, sentences, words, quotas))
                    finally:
                        _drop(server, name)
        if not args.no_sqlite:
            with tempfile.TemporaryDirectory(prefix="loci-team-") as tmp:
                floor = await _one_run(args, str(Path(tmp) / "loci.db"), 1, sentences, words, quotas)
                result["sqlite_one_server"] = floor
    result["database"] = shown(server) if args.db else "a PostgreSQL cluster of this run's own (fsync off)"
    runs = {n: _median_run(done) for n, done in by_servers.items()}
    result["postgresql"] = {str(n): run for n, run in runs.items()}
    result["calls_per_s_by_round"] = {n: [r["calls_per_s"] for r in done] for n, done in by_servers.items()}
    result["over_one"] = {str(n): round(runs[n]["calls_per_s"] / runs[1]["calls_per_s"], 2) for n in counts[1:]}
    cores = os.cpu_count() or 1
    result["machine"] = {"cpu": cpu_name(), "cores": cores, "load_avg": [round(x, 2) for x in os.getloadavg()]}
    result["note"] = (
        f"the database, the servers and the clients all run on this machine ({cores} cores): they share its CPU"
    )
    every = [r for done in by_servers.values() for r in done]
    result["met"] = {
        "errors": all(r["errors"] == 0 for r in every),
        "acknowledged_equals_stored": all(r["writes_acknowledged"] == r["rows_stored"] for r in every),
        **{
            f"{word}_over_one": result["over_one"][str(n)] >= GOALS[f"{word}_over_one"]
            for n, word in ((2, "two"), (4, "four"))
            if str(n) in result["over_one"]
        },
    }
    return result
