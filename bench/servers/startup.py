"""`loci bench startup`: how long the `loci` process takes to start, for the light commands.

Each command runs as a fresh process, as a person types it: `loci --version`
and `loci memory search QUERY` on a small home made for the run (20 facts).
Each is timed `--runs` times (after one warm-up run, so the file cache is
warm) and the medians are reported: wall time (`version_s`,
`memory_search_s`) and the CPU the process used (`*_cpu_s`, user plus
system, which a loaded machine inflates less). The same-run baseline is the
interpreter alone, `python -c pass` (`python_s`): what no change to Loci can
remove. The process is the `loci` script beside the interpreter when there
is one, else `python -m loci.runtime.cli.main`.

`loci serve` is timed as an MCP client launches it, over stdio on the same
home: from the process's start to the result of `initialize`
(`serve_initialize_s`) and to the result of the first `tools/list` that
follows `notifications/initialized` (`serve_tools_list_s`), medians of the
same runs. Its ablation, in the same run, is the server without its early
answers (`LOCI_SERVE_EARLY=0`, servers/transports/ready.py): the time the SDK and the
runtime take to load before the real server answers
(`serve_initialize_loaded_s`, `serve_tools_list_loaded_s`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph

__all__ = ["add_arguments", "run"]

FACTS = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each command (default 5)")


def _loci() -> list[str]:
    script = Path(sys.executable).with_name("loci")
    if script.exists() or shutil.which("loci"):
        return [str(script if script.exists() else shutil.which("loci"))]
    return [sys.executable, "-m", "loci.runtime.cli.main"]


def _serve_times(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting `command` (a stdio MCP server) to its `initialize` result, and to its first tool list."""
    opening = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    started = time.perf_counter()
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        watchdog = threading.Timer(120, process.kill)  # a server that never answers ends the run, not hangs it
        watchdog.start()
        try:
            _send(process.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": opening})
            _answer(process.stdout, 1)
            opened = time.perf_counter() - started
            _send(process.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            _send(process.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            tools = _answer(process.stdout, 2)["result"]["tools"]
            listed = time.perf_counter() - started
            if not tools:
                raise RuntimeError(f"{' '.join(command)} listed no tools")
            process.stdin.close()
            process.wait(timeout=120)
        finally:
            watchdog.cancel()
            if process.poll() is None:
                process.kill()
    return opened, listed


def _send(stdin: Any, message: dict[str, Any]) -> None:
    stdin.write(json.dumps(message).encode() + b"\n")
    stdin.flush()


def _answer(stdout: Any, ident: int) -> dict[str, Any]:
    """The answer to request `ident` (notifications and other answers before it are passed over)."""
    while line := stdout.readline():
        message = json.loads(line)
        if message.get("id") == ident and "method" not in message:
            return message
    raise RuntimeError(f"the server closed its output before answering request {ident}")


def _served(command: list[str], runs: int, early: bool) -> tuple[float, float]:
    """Median seconds to `initialize` and to the first tool list over `runs` launches, after one warm-up."""
    env = {**os.environ, "LOCI_SERVE_EARLY": "1" if early else "0"}
    times = [_serve_times(command, env) for _ in range(runs + 1)][1:]
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def _timed(command: list[str], runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of `command` over `runs` runs, after one warm-up run."""
    walls, cpus = [], []
    for attempt in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()}")
        if attempt:
            walls.append(wall)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    runs = max(1, args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "loci.db"
        async with await Store.open(db) as store:
            graph = Graph(store)
            for i in range(FACTS):
                await graph.remember(f"berth {i} of the harbor belongs to owner {i % 7}")
        loci = _loci()
        python_s, python_cpu = _timed([sys.executable, "-c", "pass"], runs)
        version_s, version_cpu = _timed([*loci, "--version"], runs)
        search_s, search_cpu = _timed([*loci, "memory", "search", "harbor owner", "--db", str(db)], runs)
        serve = [*loci, "serve", "--db", str(db)]
        opened, listed = _served(serve, runs, early=True)
        opened_loaded, listed_loaded = _served(serve, runs, early=False)
    return {
        "runs": runs,
        "cpu_count": os.cpu_count(),
        "load_1m": round(os.getloadavg()[0], 2),
        "python_s": round(python_s, 3),
        "version_s": round(version_s, 3),
        "memory_search_s": round(search_s, 3),
        "python_cpu_s": round(python_cpu, 3),
        "version_cpu_s": round(version_cpu, 3),
        "memory_search_cpu_s": round(search_cpu, 3),
        "serve_initialize_s": round(opened, 3),
        "serve_tools_list_s": round(listed, 3),
        "serve_initialize_loaded_s": round(opened_loaded, 3),
        "serve_tools_list_loaded_s": round(listed_loaded, 3),
        "version_over_python": round(version_s / python_s, 2),
        "memory_search_over_python": round(search_s / python_s, 2),
    }
