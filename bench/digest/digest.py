"""`loci bench digest`: what long-document jobs cost, and how well they answer.

Three workloads, one command:

- runtime cost (default): `--tokens 1000000` with the scripted oracle
  (`bench.digest.needles`), so the numbers are the runtime's own: loading into the
  store, chunking, prompts, a checkpoint after every chunk. The full length
  and a tenth of it (`small`) each run in a fresh process, which reports
  its wall time and peak RSS; the ratios say whether time is linear and
  memory flat.
- model overhead: `--model llama:default --tokens 20000` streams a document
  through a real model and reports the share of wall time spent outside the
  model's calls.
- real documents: `--real` plants one-line facts in real texts past the
  window (stdlib modules, a manual) and compares `stream`, `auto` and
  `loci run --file` on the same model (`bench.digest.real`).
- accuracy: `--accuracy --lengths 2000,8000` plants single-hop and two-hop
  needles (`bench.digest.needles`) and asks each with every strategy, `direct` (cut
  to the window) as the baseline in the same run. `--model oracle` checks the
  plumbing at any length.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from loci.bench.digest.needles import Needle, haystack_source, make_needles, oracle, score, write_haystack
from loci.bench.digest.real import run_real
from loci.runtime.cli.doctor import cpu_name
from loci.runtime.digest.run import digest
from loci.runtime.digest.settings import MeteredModel
from loci.runtime.models.base import Model
from loci.runtime.models.specs import load_model, parse_spec

__all__ = ["add_arguments", "run"]

GOALS = {"wall_s": 30.0, "peak_rss_mb": 300.0, "rss_ratio": 1.2, "time_ratio": 11.0, "overhead": 0.05}
WORDS = "whitespace words (the scripted model's tokenizer)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tokens", type=int, default=1_000_000, help="document length (default 1,000,000)")
    parser.add_argument("--model", default="oracle", help="oracle (scripted, default) or a model spec")
    parser.add_argument("--context-window", type=int, default=None, help="the model's window (oracle: 8,192)")
    parser.add_argument("--chunk-tokens", type=int, default=None, help="stream chunk size (default: what fits)")
    parser.add_argument("--memory-tokens", type=int, default=None, help="stream memory bound (default: window/8)")
    parser.add_argument("--threads", type=int, default=None, help="llama models: threads (default: every core)")
    parser.add_argument("--repeat", type=int, default=3, help="runtime cost: runs per length; the fastest counts")
    parser.add_argument("--accuracy", action="store_true", help="run the needle set instead")
    parser.add_argument("--lengths", default="2000,8000", help="with --accuracy: document lengths, comma-separated")
    parser.add_argument("--needles", type=int, default=4, help="with --accuracy: needles per length (half two-hop)")
    parser.add_argument("--strategies", default="direct,stream,navigate", help="with --accuracy: strategies to score")
    parser.add_argument("--real", action="store_true", help="facts planted in real documents: stream, auto, loci run")
    parser.add_argument(
        "--docs", default=None, help="with --real: documents, comma-separated (default: stdlib, a manual)"
    )
    parser.add_argument("--methods", default="stream,auto,run", help="with --real: methods to compare")
    parser.add_argument("--max-turns", type=int, default=8, help="with --real: turns for navigate and loci run")
    parser.add_argument("--child", help=argparse.SUPPRESS)


def words(text: str) -> int:
    return len(text.split())


async def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.child:
        return await _child(args)
    if args.accuracy:
        return await _accuracy(args)
    if args.real:
        if args.model == "oracle":  # the oracle reads needles it planted itself; real texts need a real model
            args.model = "llama:default"
        model = await _load(args)
        try:
            return await run_real(model, args)
        finally:
            await model.aclose()
    if args.model != "oracle":
        return await _overhead(args)
    return await _runtime(args)


# -- runtime cost -------------------------------------------------------------


async def _runtime(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="loci-bench-digest-") as tmp:
        big = _measure(Path(tmp), args.tokens, args)
        small = _measure(Path(tmp), args.tokens // 10, args)
    time_ratio = big["wall_s"] / small["wall_s"]
    rss_ratio = big["peak_rss_mb"] / small["peak_rss_mb"]
    return {
        "bench": "digest",
        "cpu": cpu_name(),
        "model": "scripted:oracle",
        "tokenizer": WORDS,
        **big,
        "small": small,
        "time_ratio_1m_100k": round(time_ratio, 2),
        "rss_ratio_1m_100k": round(rss_ratio, 3),
        "goals": {
            "wall_s<=30": big["wall_s"] <= GOALS["wall_s"],
            "peak_rss_mb<=300": big["peak_rss_mb"] <= GOALS["peak_rss_mb"],
            "rss_ratio<=1.2": rss_ratio <= GOALS["rss_ratio"],
            "time_ratio<=11": time_ratio <= GOALS["time_ratio"],
        },
    }


def _measure(tmp: Path, tokens: int, args: argparse.Namespace) -> dict[str, Any]:
    """Write the document, then digest it `--repeat` times, each in a fresh process that reports its own
    time and peak RSS: the fastest run counts (the others met a busier machine), and the largest RSS."""
    path = tmp / f"haystack-{tokens}.md"
    write_haystack(path, tokens, words, make_needles(2))
    runs = [_measure_once(tmp / f"home-{tokens}-{n}", path, tokens, args) for n in range(max(1, args.repeat))]
    best = min(runs, key=lambda run: run["wall_s"])
    return {
        **best,
        "peak_rss_mb": max(run["peak_rss_mb"] for run in runs),
        "runs_wall_s": [run["wall_s"] for run in runs],
    }


def _measure_once(home: Path, path: Path, tokens: int, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "loci.runtime.cli.main",
        "bench",
        "digest",
        "--json",
        "--child",
        str(path),
        "--tokens",
        str(tokens),
    ]
    for flag, value in (
        ("--chunk-tokens", args.chunk_tokens),
        ("--memory-tokens", args.memory_tokens),
        ("--context-window", args.context_window),
    ):
        if value is not None:
            command += [flag, str(value)]
    env = {**os.environ, "LOCI_HOME": str(home)}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"the measuring process failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


async def _child(args: argparse.Namespace) -> dict[str, Any]:
    needles = make_needles(2)
    model = oracle(needles, context_window=args.context_window or 8_192)
    started = time.perf_counter()
    record = await digest(
        [args.child],
        needles[0].question,
        model=model,
        strategy="stream",
        chunk_tokens=args.chunk_tokens,
        memory_tokens=args.memory_tokens,
    )
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {
        "tokens": record["tokens_total"],
        "wall_s": round(wall, 3),
        "tokens_per_s": round(record["tokens_total"] / wall),
        "peak_rss_mb": round(peak, 1),
        "model_calls": record["model_calls"],
        "answer_correct": score(record["answer"], needles[0].answer)["exact"],
        "evidence": record["evidence"],
    }


# -- model overhead -----------------------------------------------------------


async def _load(args: argparse.Namespace) -> Model:
    """The model of `--model`; a llama model with `--threads` if given (one thread copes better with a busy machine)."""
    backend, name, _ = parse_spec(args.model)
    if backend == "llama" and args.threads:
        from loci.runtime.models.llama.backend import DEFAULT_CONTEXT, LlamaModel

        window = args.context_window or DEFAULT_CONTEXT
        return await LlamaModel.load(name or "default", context_window=window, threads=args.threads)
    return await load_model(args.model, context_window=args.context_window)


async def _overhead(args: argparse.Namespace) -> dict[str, Any]:
    model = await _load(args)
    metered = MeteredModel(model)
    needles = make_needles(2)
    try:
        with tempfile.TemporaryDirectory(prefix="loci-bench-digest-") as tmp:
            path = Path(tmp) / "haystack.md"
            write_haystack(path, args.tokens, model.count_tokens, needles)
            started = time.perf_counter()
            record = await digest(
                [path],
                needles[0].question,
                model=metered,
                db=Path(tmp) / "loci.db",
                strategy="stream",
                chunk_tokens=args.chunk_tokens,
                memory_tokens=args.memory_tokens,
            )
            wall = time.perf_counter() - started
    finally:
        await model.aclose()
    return {
        "bench": "digest-model",
        "cpu": cpu_name(),
        "model": args.model,
        "threads": args.threads,
        "tokens": record["tokens_total"],
        "wall_s": round(wall, 2),
        "tokens_per_s": round(record["tokens_total"] / wall, 1),
        "model_calls": record["model_calls"],
        "model_s": round(metered.seconds, 2),
        "runtime_s": round(wall - metered.seconds, 3),
        "model_share": round(metered.seconds / wall, 4),
        "runtime_overhead": round(1 - metered.seconds / wall, 4),
        "goal_overhead<=0.05": 1 - metered.seconds / wall <= GOALS["overhead"],
        "answer": record["answer"],
        "expected": needles[0].answer,
    }


# -- accuracy -----------------------------------------------------------------


async def _accuracy(args: argparse.Namespace) -> dict[str, Any]:
    lengths = [int(n) for n in args.lengths.split(",") if n.strip()]
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    needles = make_needles(args.needles)
    if args.model == "oracle":
        model: Model = oracle(needles, context_window=args.context_window or 8_192)
        strategies = [s for s in strategies if s != "navigate"]  # the oracle reads; it does not browse
    else:
        model = await _load(args)
    results: dict[str, dict[str, Any]] = {s: {} for s in strategies}
    try:
        with tempfile.TemporaryDirectory(prefix="loci-bench-digest-") as tmp:
            for length in lengths:
                path = Path(tmp) / f"needles-{length}.md"
                write_haystack(path, length, model.count_tokens, needles)
                for strategy in strategies:
                    results[strategy][str(length)] = await _ask_all(
                        model, path, Path(tmp) / "loci.db", strategy, needles, args
                    )
    finally:
        await model.aclose()
    return {
        "bench": "digest-accuracy",
        "cpu": cpu_name(),
        "model": args.model,
        "context_window": model.context_window,
        "haystack": haystack_source()[0],
        "needles": {
            "single": sum(n.kind == "single" for n in needles),
            "two-hop": sum(n.kind == "two-hop" for n in needles),
        },
        "baseline": "direct",
        "results": results,
    }


async def _ask_all(
    model: Model, path: Path, db: Path, strategy: str, needles: list[Needle], args: argparse.Namespace
) -> dict[str, Any]:
    rows, started = [], time.perf_counter()
    for needle in needles:
        try:
            record = await digest(
                [path],
                needle.question,
                model=model,
                db=db,
                strategy=strategy,
                chunk_tokens=args.chunk_tokens,
                memory_tokens=args.memory_tokens,
            )
            answer, calls = record["answer"], record["model_calls"]
        except Exception as exc:  # noqa: BLE001 - a model that breaks a run scores zero on it, and the bench goes on
            answer, calls = f"(failed: {exc})", 0
        rows.append(
            {
                "kind": needle.kind,
                **score(answer, needle.answer),
                "calls": calls,
                "answer": answer[:80],
                "expected": needle.answer,
            }
        )
    n = len(rows)
    by_kind = {
        kind: round(
            sum(r["exact"] for r in rows if r["kind"] == kind) / max(1, sum(r["kind"] == kind for r in rows)), 3
        )
        for kind in ("single", "two-hop")
    }
    return {
        "exact": round(sum(r["exact"] for r in rows) / n, 3),
        "contains": round(sum(r["contains"] for r in rows) / n, 3),
        "exact_by_kind": by_kind,
        "model_calls": sum(r["calls"] for r in rows),
        "wall_s": round(time.perf_counter() - started, 1),
        "answers": rows,
    }
