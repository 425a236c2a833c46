"""`loci bench mcp`: the tool-call round trip of `loci serve`, in-process, over stdio and over HTTP.

A fresh home gets a `--nodes`-node memory graph (10,000 by default). Then
`memory_recall` (k=5, a query of two words from the graph's own sentences)
is timed `--calls` times on each path: in-process (`mcp.Client` on the
server object, no framing), over stdio (`loci serve --tools memory` as a
subprocess) and over streamable HTTP (`loci serve --http` on a free
loopback port, with the server's bearer token, and taking turns with it, a
token of the home, `loci tokens`: what resolving a principal adds, kept per
token hash as served, and, on a second server with `--token-cache 0`, looked
up in the home on every call; the check alone is timed in process too; each
HTTP server has a copy of the home of its own). The ablation, in the same
run: the same calls over stdio, and over HTTP taking turns with the others,
to a server that serves every call by the MCP SDK's own path
(`LOCI_SERVE_THIN=0`: servers/transports/thin.py off), `*_sdk_path_*`. Then `--clients` HTTP clients (8) make
`--concurrent-calls` calls each (1,000) at once: the errors and the
throughput. The stdio servers run from this tree's directory, so they
import the same code as the bench (an MCP client passes a server only a few
variables of its environment, not `PYTHONPATH`).

The baseline, in the same run, is the reference memory server over stdio
(`npx -y @modelcontextprotocol/server-memory`, as `bench memory-peer` runs
it), holding `--baseline-entities` entities: its `search_nodes` round trip
for an exact name, its cheapest read. Beside the absolute times it reports
what each transport adds (`*_overhead_p50_ms`, the p50 less the in-process
one) and the machine's load average, since absolute times mean little on a
busy machine; and the CPU time each path spends per call (`*_cpu_ms_per_call`:
the server process's, read from /proc by bench/servers/cpu.py, and in process and
for the clients this process's own: `stdio_client_cpu_ms_per_call`, and
`http_client_cpu_ms_per_call` over the four HTTP clients taking turns), which
waiting for a core does not blur: on a shared machine that is the figure two
trees compare by. On 2 cores a client's CPU competes with its server's, so
a round trip's p50 is about the two added, and a wait for a core at each end.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import secrets
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client

from loci.bench.recall.memory import make_sentences
from loci.bench.servers.cpu import ServerCpu
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.projects import DEFAULT_PROJECT
from loci.memory.records.tokens import Principal, Tokens
from loci.runtime.cli.doctor import cpu_name
from loci.servers.app import build_app
from loci.servers.auth.principals import TOKEN_CACHE_S, Principals

__all__ = ["GOALS", "add_arguments", "http_server", "run"]

REPO = Path(__file__).resolve().parents[2]  # the stdio servers run from here, so they import this tree
# What a call should cost on a 2-core machine; `met` says which this run reached.
GOALS = {
    "stdio_p50_ms": 3.0,
    "stdio_overhead_p50_ms": 1.0,
    "http_p50_ms": 5.0,
    "concurrent_calls_per_s": 400.0,
    "concurrent_errors": 0,
    "reference_over_loci_stdio_search": 1.5,
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nodes", type=int, default=10_000, help="memories in the graph")
    parser.add_argument("--calls", type=int, default=300, help="timed calls on each path")
    parser.add_argument("--clients", type=int, default=8, help="concurrent HTTP clients")
    parser.add_argument("--concurrent-calls", type=int, default=1_000, help="calls per concurrent client")
    parser.add_argument("--baseline-entities", type=int, default=1_000, help="entities in the reference server")
    parser.add_argument("--no-baseline", action="store_true", help="skip the reference server (no Node.js)")
    parser.add_argument("--seed", type=int, default=7)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="loci-bench-mcp-") as tmp:
        db = Path(tmp) / "loci.db"
        words = await _fill(db, args.nodes, args.seed)
        queries = [f"{rng.choice(words)} {rng.choice(words)}" for _ in range(args.calls)]
        result: dict[str, Any] = {"cpu": cpu_name(), "nodes": args.nodes, "calls": args.calls}
        async with await Store.open(db) as store, Client(build_app(store, ["memory"])) as client:
            started = time.process_time()
            result.update(_stats("inprocess", await _time(client, queries)))
            result["inprocess_cpu_ms_per_call"] = ServerCpu.per_call(started, time.process_time(), len(queries) + 1)
        serve = [*_loci(), "serve", "--tools", "memory", "--db", str(db)]
        thin = StdioServerParameters(command=sys.executable, args=serve, cwd=str(REPO))
        sdk_env = _sdk_path_env(get_default_environment())
        sdk = StdioServerParameters(command=sys.executable, args=serve, cwd=str(REPO), env=sdk_env)
        async with Client(thin) as client:
            servers = ServerCpu()
            started, mine = servers(), time.process_time()
            result.update(_stats("stdio", await _time(client, queries)))
            result["stdio_server_cpu_ms_per_call"] = ServerCpu.per_call(started, servers(), len(queries) + 1)
            result["stdio_client_cpu_ms_per_call"] = ServerCpu.per_call(mine, time.process_time(), len(queries) + 1)
        async with Client(sdk) as client:  # the ablation: every call on the SDK's path
            servers = ServerCpu()
            started = servers()
            result.update(_stats("stdio_sdk_path", await _time(client, queries)))
            result["stdio_sdk_path_server_cpu_ms_per_call"] = ServerCpu.per_call(started, servers(), len(queries) + 1)
        async with await Store.open(db) as store:
            user = await Tokens(store).add("bench", [DEFAULT_PROJECT])
            result.update(await _token_check(store, user))
        # Each HTTP server on a copy of the home: taking turns on one file, every server's use-count writes would
        # drop the others' page caches on every call, as no single server's own writes do.
        uncached_db, sdk_db = _copy(db, "http-uncached"), _copy(db, "http-sdk-path")
        served, sdk_served = http_server(db), http_server(sdk_db, env=_sdk_path_env(dict(os.environ)))
        with (
            served as (url, token),
            http_server(uncached_db, "--token-cache", "0") as (uncached_url, _),
            sdk_served as (sdk_url, sdk_token),
        ):
            server, sdk_server = ServerCpu(served.process.pid), ServerCpu(sdk_served.process.pid)
            started, sdk_started, mine = server(), sdk_server(), time.process_time()
            async with (
                _http_client(url, token) as own,
                _http_client(url, user) as home,
                _http_client(uncached_url, user) as uncached,
                _http_client(sdk_url, sdk_token) as sdk_path,
            ):
                owners, users, looked_up, sdk_times = await _time_turns([own, home, uncached, sdk_path], queries)
            # The clients' CPU (the SDK's client on httpx, in this process), per call, over the four taking turns.
            result["http_client_cpu_ms_per_call"] = ServerCpu.per_call(mine, time.process_time(), 4 * len(queries) + 4)
            result["http_sdk_path_server_cpu_ms_per_call"] = ServerCpu.per_call(
                sdk_started, sdk_server(), len(queries) + 1
            )
            result.update(_stats("http_sdk_path", sdk_times))
            # The first server answered the owner's calls and the home token's (kept per token hash), and a warm one.
            result["http_server_cpu_ms_per_call"] = ServerCpu.per_call(started, server(), 2 * len(queries) + 2)
            result.update(_stats("http", owners))
            result.update(_stats("http_home_token", users))
            result.update(_stats("http_home_token_uncached", looked_up))
            result.update(await _concurrent(url, token, args.clients, args.concurrent_calls, words, rng, server))
        if not args.no_baseline:
            result.update(await _baseline(Path(tmp), args.baseline_entities, args.calls, rng))
    # What the transport adds to the same call: the path's p50 less the in-process p50.
    for path in ("stdio", "http", "stdio_sdk_path", "http_sdk_path"):
        result[f"{path}_overhead_p50_ms"] = round(result[f"{path}_p50_ms"] - result["inprocess_p50_ms"], 3)
    # What a home token's check adds to a call: kept per token hash (the default), and looked up every time.
    for kind in ("home_token", "home_token_uncached"):
        result[f"{kind}_check_p50_ms"] = round(result[f"http_{kind}_p50_ms"] - result["http_p50_ms"], 3)
    result["load_average_1m"] = round(os.getloadavg()[0], 2)
    result["goals"] = dict(GOALS)
    result["met"] = {
        "stdio_p50_ms": result["stdio_p50_ms"] <= GOALS["stdio_p50_ms"],
        "stdio_overhead_p50_ms": result["stdio_overhead_p50_ms"] <= GOALS["stdio_overhead_p50_ms"],
        "http_p50_ms": result["http_p50_ms"] <= GOALS["http_p50_ms"],
        "concurrent_calls_per_s": result["concurrent_calls_per_s"] >= GOALS["concurrent_calls_per_s"],
        "concurrent_errors": result["concurrent_errors"] == 0,
    }
    if "reference_over_loci_stdio_search" in result:
        met = result["reference_over_loci_stdio_search"] >= GOALS["reference_over_loci_stdio_search"]
        result["met"]["reference_over_loci_stdio_search"] = met
    return result


async def _fill(db: Path, nodes: int, seed: int) -> list[str]:
    sentences = make_sentences(nodes, seed)
    async with await Store.open(db) as store:
        graph = Graph(store)
        for start in range(0, nodes, 1_000):
            await graph.add_many([NewNode(text) for text in sentences[start : start + 1_000]], cause="bench")
    return sorted({word.strip(".,").lower() for text in sentences[:500] for word in text.split() if len(word) > 4})


async def _time(client: Client, queries: list[str]) -> list[float]:
    await client.call_tool("memory_recall", {"query": queries[0], "k": 5})  # warm: connection, caches
    times = []
    for query in queries:
        t0 = time.perf_counter()
        result = await client.call_tool("memory_recall", {"query": query, "k": 5})
        times.append(time.perf_counter() - t0)
        if result.is_error:
            raise UsageError(f"memory_recall failed during the benchmark: {result.content}")
    return times


async def _token_check(store: Store, token: str) -> dict[str, float]:
    """The check alone, in process: a home token's principal as served (kept per token hash), and looked up."""
    out: dict[str, float] = {}
    headers = {b"authorization": f"Bearer {token}".encode()}
    for kind, expiry, n in (("cached", TOKEN_CACHE_S * 1000, 5_000), ("uncached", 0.0, 500)):
        principals = Principals(
            store, Principal("owner", (DEFAULT_PROJECT,)), token=None, open_without_token=False, expiry=expiry
        )
        await principals.of(headers)
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            await principals.of(headers)
            times.append(time.perf_counter() - t0)
        out[f"token_check_{kind}_p50_us"] = round(statistics.median(times) * 1e6, 1)
    return out


async def _time_turns(clients: list[Client], queries: list[str]) -> list[list[float]]:
    """The same calls on each client, taking turns (the first to go moves round each call), so all see the same
    load."""
    times: list[list[float]] = [[] for _ in clients]
    for client in clients:
        await client.call_tool("memory_recall", {"query": queries[0], "k": 5})  # warm: connection, caches
    for i, query in enumerate(queries):
        for j in range(len(clients)):
            k = (i + j) % len(clients)
            t0 = time.perf_counter()
            result = await clients[k].call_tool("memory_recall", {"query": query, "k": 5})
            times[k].append(time.perf_counter() - t0)
            if result.is_error:
                raise UsageError(f"memory_recall failed during the benchmark: {result.content}")
    return times


def _stats(path: str, times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        f"{path}_p50_ms": round(statistics.median(ordered) * 1000, 3),
        f"{path}_p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 3),
    }


async def _concurrent(
    url: str, token: str, clients: int, calls: int, words: list[str], rng: random.Random, server: ServerCpu
) -> dict:
    """`clients` clients making `calls` calls each at once: the errors, the throughput, and where the CPU went
    (the server's per call, and this process's, where the clients run)."""
    errors = 0
    queries = [[f"{rng.choice(words)} {rng.choice(words)}" for _ in range(calls)] for _ in range(clients)]

    async def one(mine: list[str]) -> None:
        nonlocal errors
        try:
            async with _http_client(url, token) as client:
                for query in mine:
                    try:
                        result = await client.call_tool("memory_recall", {"query": query, "k": 5})
                        errors += bool(result.is_error)
                    except Exception:
                        errors += 1
        except Exception:
            errors += len(mine)

    t0, cpu0, mine0 = time.perf_counter(), server(), time.process_time()
    async with anyio.create_task_group() as group:
        for mine in queries:
            group.start_soon(one, mine)
    elapsed = time.perf_counter() - t0
    return {
        "concurrent_clients": clients,
        "concurrent_calls": clients * calls,
        "concurrent_errors": errors,
        "concurrent_calls_per_s": round(clients * calls / elapsed, 1),
        "concurrent_server_cpu_ms_per_call": ServerCpu.per_call(cpu0, server(), clients * calls),
        "concurrent_client_cpu_ms_per_call": ServerCpu.per_call(mine0, time.process_time(), clients * calls),
    }


async def _baseline(tmp: Path, entities: int, calls: int, rng: random.Random) -> dict[str, Any]:
    npx = shutil.which("npx")
    if npx is None:
        raise UsageError("the baseline needs Node.js (npx); pass --no-baseline to skip it")
    names = [f"Entity_{i:06d}" for i in range(entities)]
    notes = make_sentences(entities, 11)
    batch = [{"name": n, "entityType": "thing", "observations": [notes[i]]} for i, n in enumerate(names)]
    env = {"MEMORY_FILE_PATH": str(tmp / "reference.jsonl"), "PATH": os.environ.get("PATH", "")}
    reference = StdioServerParameters(command=npx, args=["-y", "@modelcontextprotocol/server-memory"], env=env)
    loci = StdioServerParameters(
        command=sys.executable,
        args=[*_loci(), "serve", "memory", "--compat", "--db", str(tmp / "compat.db")],
        cwd=str(REPO),
    )
    picks = [rng.choice(names) for _ in range(calls)]
    out: dict[str, Any] = {"baseline_entities": entities}
    for key, params in (("reference", reference), ("loci_compat", loci)):
        async with Client(params) as client:
            for start in range(0, entities, 100):
                await client.call_tool("create_entities", {"entities": batch[start : start + 100]})
            servers = ServerCpu()
            started = servers()
            times = await _timed(lambda name, c=client: c.call_tool("search_nodes", {"query": name}), picks)
            out[f"{key}_stdio_search_cpu_ms_per_call"] = ServerCpu.per_call(started, servers(), len(picks) + 1)
        out.update(_stats(f"{key}_stdio_search", times))
    out["reference_over_loci_stdio_search"] = round(
        out["reference_stdio_search_p50_ms"] / out["loci_compat_stdio_search_p50_ms"], 2
    )
    if out["loci_compat_stdio_search_cpu_ms_per_call"]:
        out["reference_over_loci_stdio_search_cpu"] = round(
            out["reference_stdio_search_cpu_ms_per_call"] / out["loci_compat_stdio_search_cpu_ms_per_call"], 2
        )
    return out


async def _timed(call: Callable[[str], Awaitable[Any]], items: list[str]) -> list[float]:
    await call(items[0])
    times = []
    for item in items:
        t0 = time.perf_counter()
        await call(item)
        times.append(time.perf_counter() - t0)
    return times


def _copy(db: Path, name: str) -> Path:
    """A copy of the closed home `db` beside it, named `name`, for a server of its own."""
    copy = db.with_name(f"{name}.db")
    shutil.copyfile(db, copy)
    return copy


def _loci() -> list[str]:
    return ["-m", "loci.runtime.cli.main"]


def _sdk_path_env(base: dict[str, str]) -> dict[str, str]:
    """`base` for a server that serves every call by the SDK's own path (servers/transports/thin.py off)."""
    return {**base, "LOCI_SERVE_THIN": "0"}


def _http_client(url: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30.0, read=300.0))
    return Client(streamable_http_client(url, http_client=http))


class http_server:
    """`loci serve --http --tools memory` on a free loopback port (it names the port), for the length of a `with`;
    `extra` are more flags for it. Its first stderr line says where it serves; a thread reads and drops the rest (a
    capped server logs a warning for every session it refuses)."""

    def __init__(self, db: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.db = db
        self.extra = extra
        self.env = os.environ if env is None else env
        self.token = secrets.token_urlsafe(24)
        self.drain: threading.Thread | None = None

    def __enter__(self) -> tuple[str, str]:
        env = {**self.env, "LOCI_TOKEN": self.token}
        command = [
            sys.executable,
            *_loci(),
            "serve",
            "--http",
            "--tools",
            "memory",
            "--port",
            "0",
            "--db",
            str(self.db),
            *self.extra,
        ]
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, bufsize=0)
        assert self.process.stderr is not None
        deadline = time.monotonic() + 60
        while (left := deadline - time.monotonic()) > 0 and select.select([self.process.stderr], [], [], left)[0]:
            line = self.process.stderr.readline().decode()
            if not line:
                break
            if match := re.search(r"serving MCP on (\S+)", line):
                # Whatever it logs from here on is read and dropped, so a full pipe never stops it.
                self.drain = threading.Thread(target=self.process.stderr.read, daemon=True)
                self.drain.start()
                return match.group(1), self.token
        self.__exit__()
        raise UsageError("loci serve --http did not come up for the benchmark")

    def __exit__(self, *exc_info: object) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.drain is not None:
            self.drain.join(timeout=15)  # the process is gone: its pipe is at its end
        if self.process.stderr is not None:
            self.process.stderr.close()
