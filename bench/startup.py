"""`loci bench startup`: how long the `loci` process takes to start, for the light commands.

Each command runs as a fresh process, as a person types it: `loci --version`
and `loci memory search QUERY` on a small home made for the run (20 facts).
Each is timed `--runs` times (after one warm-up run, so the file cache is
warm) and the medians are reported: wall time (`version_s`,
`memory_search_s`) and the CPU the process used (`*_cpu_s`, user plus
system, which a loaded machine inflates less). The same-run baseline is the
interpreter alone, `python -c pass` (`python_s`): what no change to Loci can
remove. The process is the `loci` script beside the interpreter when there
is one, else `python -m runtime.cli.main`.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from memory.graph.graph import Graph
from memory.store import Store

__all__ = ["add_arguments", "run"]

FACTS = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each command (default 5)")


def _loci() -> list[str]:
    script = Path(sys.executable).with_name("loci")
    if script.exists() or shutil.which("loci"):
        return [str(script if script.exists() else shutil.which("loci"))]
    return [sys.executable, "-m", "runtime.cli.main"]


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
        "version_over_python": round(version_s / python_s, 2),
        "memory_search_over_python": round(search_s / python_s, 2),
    }
