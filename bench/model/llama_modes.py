"""`loci bench llama-modes`: the bundled model's speed with llama.cpp's extra buffer types on and off.

Each measurement is a child process, `loci doctor --json` with
`LOCI_LLAMA_EXTRA_BUFTS` forced to 0 or 1, because on a CPU whose AMX kernels
trap the "on" child dies (SIGILL or SIGSEGV): the report then says which
signal killed it instead of a speed. Both modes run with a long prompt (`--prompt-tokens`,
one batch, the case that traps) and a one-token prompt (`--short-prompt-tokens`,
which does not reach the batched kernels, so generation speed can still be
compared). The modes alternate in `--repeats` rounds, so that a machine
loaded by others slows both alike; the medians are reported, with on/off
ratios where both modes survived.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
from typing import Any

import anyio.to_thread

from loci.runtime.cli.doctor import cpu_name
from loci.runtime.models.llama.verdict import ENV

__all__ = ["add_arguments", "run"]

# The child turns core dumps off first: a crash is an expected answer here.
CHILD = (
    "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_CORE, (0, 0)); "
    "sys.argv = ['loci', *sys.argv[1:]]; runpy.run_module('loci.runtime.cli.main', run_name='__main__')"
)
CHILD_SECONDS = 600.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prompt-tokens", type=int, default=256, help="the long prompt, one batch (default 256)")
    parser.add_argument("--short-prompt-tokens", type=int, default=1, help="the short prompt (default 1)")
    parser.add_argument("--tokens", type=int, default=32, help="tokens generated per run (default 32)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: one per core)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of every mode and prompt (default 3)")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    cases = {
        f"{mode}_{size}": (mode, prompt)
        for size, prompt in (("long", args.prompt_tokens), ("short", args.short_prompt_tokens))
        for mode in ("off", "on")
    }
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in cases}
    for _ in range(args.repeats):
        for name, (mode, prompt) in cases.items():
            runs[name].append(await anyio.to_thread.run_sync(_child, mode, prompt, args))
    threads = args.threads or os.cpu_count() or 2
    report: dict[str, Any] = {"cpu": cpu_name(), "cores": os.cpu_count(), "threads": threads}
    report.update(tokens=args.tokens, repeats=args.repeats)
    for name, results in runs.items():
        report[name] = _summary(results, cases[name][1])
    for size in ("long", "short"):
        report[f"on_over_off_{size}"] = _ratios(report[f"on_{size}"], report[f"off_{size}"])
    return report


def _child(mode: str, prompt_tokens: int, args: argparse.Namespace) -> dict[str, Any]:
    threads = args.threads or os.cpu_count() or 2
    argv = [sys.executable, "-c", CHILD, "doctor", "--json", "--prompt-tokens", str(prompt_tokens)]
    argv += ["--tokens", str(args.tokens), "--threads", str(threads)]
    env = {**os.environ, ENV: "1" if mode == "on" else "0"}
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=CHILD_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return {"failed": f"timed out after {CHILD_SECONDS:.0f} s"}
    if done.returncode < 0:
        return {"crashed": signal.Signals(-done.returncode).name}
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return {"failed": f"exited with {done.returncode}: {lines[-1] if lines else ''}"}
    return json.loads(done.stdout)


def _summary(results: list[dict[str, Any]], prompt_tokens: int) -> dict[str, Any]:
    speeds = [r for r in results if "prompt_tokens_per_second" in r]
    summary: dict[str, Any] = {"prompt_tokens": prompt_tokens, "runs": len(results), "survived": len(speeds)}
    crashes = sorted({r["crashed"] for r in results if "crashed" in r})
    failures = sorted({r["failed"] for r in results if "failed" in r})
    if crashes:
        summary["crashed"] = crashes
    if failures:
        summary["failed"] = failures
    for key in ("prompt_tokens_per_second", "generation_tokens_per_second"):
        if speeds:
            summary[key] = round(statistics.median(r[key] for r in speeds), 1)
    return summary


def _ratios(on: dict[str, Any], off: dict[str, Any]) -> dict[str, float] | None:
    keys = ("prompt_tokens_per_second", "generation_tokens_per_second")
    if not all(key in on and key in off and off[key] for key in keys):
        return None
    return {key: round(on[key] / off[key], 2) for key in keys}
