"""`loci bench hooks`: how long Claude Code waits for `hook recall`, as the process it runs, at 100,000 nodes.

It builds the graph of `loci bench memory` (`--nodes` generated facts, about
three weighted edges each; bench/recall/memory.py) in a temporary home, then runs
the installed recall command (`python -m loci.memory.hooks recall --db HOME`,
memory/hooks/__main__.py) `--runs` times as a new process, the event's JSON
on stdin with a prompt of words from a random fact, and times each from
start to exit. The same run also times a bare `python -c pass` (the floor
any hook process pays) and the in-process recall of `bench memory`, so the
share of process start, imports and recall can be read off.

Keys: `recall_p50_ms`, `recall_p95_ms` (the hook process, wall clock),
`recall_cpu_p50_ms` (its CPU time, which a loaded machine inflates less), `python_start_p50_ms`,
`in_process_recall_p50_ms`, `answered` (the share of runs that printed
context), `nodes`, `runs`. Goal: `recall_p95_ms` under 300 on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from loci.bench.recall import memory as memory_bench
from loci.bench.recall.memory import make_sentences, percentile

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nodes", type=int, default=100_000, help="facts in the synthetic graph")
    parser.add_argument("--runs", type=int, default=30, help="hook processes to time")
    parser.add_argument("--seed", type=int, default=7)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="loci-bench-hooks-") as tmp:
        db = Path(tmp) / "loci.db"
        built = await memory_bench.run(
            argparse.Namespace(nodes=args.nodes, edges_per_node=3.0, queries=20, batch=5_000, seed=args.seed, db=db)
        )
        texts = make_sentences(args.nodes, args.seed)
        command = [sys.executable, "-m", "loci.memory.hooks", "recall", "--db", str(db)]
        _time(command, _event(rng, texts))  # the first run warms the page cache
        hook_ms, cpu_ms, answered = [], [], 0
        for _ in range(max(1, args.runs)):
            elapsed, out = _time(command, _event(rng, texts), cpu_ms)
            hook_ms.append(elapsed)
            answered += bool(out.strip())
        bare = [_time([sys.executable, "-c", "pass"], "")[0] for _ in range(max(1, args.runs // 3))]
    return {
        "nodes": built["nodes"],
        "runs": len(hook_ms),
        "recall_p50_ms": round(statistics.median(hook_ms), 1),
        "recall_p95_ms": round(percentile(hook_ms, 0.95), 1),
        "recall_cpu_p50_ms": round(statistics.median(cpu_ms), 1),
        "python_start_p50_ms": round(statistics.median(bare), 1),
        "in_process_recall_p50_ms": built["recall_p50_ms"],
        "answered": round(answered / len(hook_ms), 3),
    }


def _event(rng: random.Random, texts: list[str]) -> str:
    words = [w.strip(",()") for w in rng.choice(texts).split() if len(w) > 3]
    prompt = "What do I know about " + " ".join(rng.sample(words, min(3, len(words)))) + "?"
    event = {"session_id": "bench", "cwd": "/tmp/project", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    return json.dumps(event)


def _time(command: list[str], stdin: str, cpu: list[float] | None = None) -> tuple[float, str]:
    """Wall-clock milliseconds of one process from start to exit, and its stdout; its CPU time goes to `cpu`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return elapsed, done.stdout
