"""`loci bench context-store`: load, search and read at scale, and the memory it takes.

For each size (the main one, `--tokens`, and a smaller one for comparison,
`--compare-tokens`) a fresh child process writes a synthetic corpus to a
temporary directory as files, loads it into a new Loci home through
`ContextStore.add_directory` (the streaming path), then times searches and
reads through the public async API. Each size runs in its own process so
that `peak_rss_mb` (the process's high-water mark) belongs to that size
alone: the claim to check is that memory does not grow with the corpus.

With `--db postgresql://…` the one size (`--tokens`) is loaded into that
empty database instead, and `db_bytes` is the database's size.

Goals on the reference machine: ten million tokens loaded in at most 60 s,
search p50 at most 50 ms, peak RSS at most 500 MB.
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

import anyio

from loci.bench.context.corpus import Corpus, token_counter
from loci.memory.context.store import ContextStore
from loci.memory.engines.dialects import dialect_of
from loci.memory.engines.select import use_engine
from loci.memory.errors import LociError, UsageError
from loci.memory.location import is_postgres

__all__ = ["GOALS", "add_arguments", "measure", "run"]

GOALS = {"load_seconds_at_10m": 60.0, "search_p50_ms": 50.0, "peak_rss_mb": 500.0}
FILE_TOKENS = 1_000_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tokens", type=int, default=10_000_000, help="corpus size in tokens (default 10M)")
    parser.add_argument(
        "--compare-tokens", type=int, default=1_000_000, help="smaller size measured for comparison; 0 to skip"
    )
    parser.add_argument("--queries", type=int, default=100, help="searches timed per size")
    parser.add_argument("--reads", type=int, default=100, help="reads timed per size")
    parser.add_argument("--counter", choices=["auto", "tiktoken", "estimate"], default="auto", help="token counter")
    parser.add_argument(
        "--db", default=None, help="load into an empty postgresql://... database (one size) instead of a new file"
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = [args.tokens]
    if args.db and not is_postgres(args.db):
        raise UsageError(f"--db takes an empty postgresql://... database, not {args.db}")
    if 0 < args.compare_tokens < args.tokens and not args.db:
        sizes.insert(0, args.compare_tokens)
    results = {}
    for size in sizes:
        command = [
            sys.executable,
            "-m",
            "loci.bench.context.store",
            str(size),
            str(args.queries),
            str(args.reads),
            args.counter,
            args.db or "",
        ]
        done = await anyio.run_process(command, check=False, stderr=subprocess.PIPE)
        if done.returncode != 0:
            raise LociError(f"the context-store benchmark at {size} tokens failed: {done.stderr.decode()[-2000:]}")
        results[size] = json.loads(done.stdout)
    main = results[args.tokens]
    report: dict[str, Any] = {"bench": "context-store", "engine": "postgresql" if args.db else "sqlite", **main}
    if len(sizes) > 1:
        report["compare"] = results[sizes[0]]
        report["rss_ratio"] = round(main["peak_rss_mb"] / results[sizes[0]]["peak_rss_mb"], 2)
    report["goals"] = GOALS
    load_at_10m = main["load_seconds"] * 10_000_000 / max(1, main["tokens"])
    report["meets_goals"] = {
        "load_seconds_at_10m": load_at_10m <= GOALS["load_seconds_at_10m"],
        "search_p50_ms": main["search_p50_ms"] <= GOALS["search_p50_ms"],
        "peak_rss_mb": main["peak_rss_mb"] <= GOALS["peak_rss_mb"],
    }
    return report


async def measure(tokens: int, queries: int, reads: int, counter: str, db: str = "") -> dict[str, Any]:
    """One size, in this process: generate, load, search, read; then the sizes on disk and in memory. The home
    is a new SQLite file, or the empty PostgreSQL database `db`."""
    counter_name, count = token_counter(counter)
    with tempfile.TemporaryDirectory(prefix="loci-bench-") as tmp:
        corpus = Corpus()
        started = time.perf_counter()
        corpus.write(Path(tmp) / "corpus", tokens, FILE_TOKENS, count)
        generate_s = time.perf_counter() - started
        async with use_engine(db or Path(tmp) / "bench.db") as store:
            held = await store.read(lambda conn: conn.execute("SELECT count(*) FROM context_objects").fetchone()[0])
            if held:
                raise UsageError(f"bench context-store loads an empty database; {store.location} holds {held} objects")
            contexts = ContextStore(store, count)
            started = time.perf_counter()
            loaded = await contexts.add_directory(Path(tmp) / "corpus")
            load_s = time.perf_counter() - started
            loaded_tokens = sum(o.tokens for o in loaded.objects)
            search_ms = await _time_searches(contexts, corpus, queries)
            read_ms = await _time_reads(contexts, loaded.objects, reads)
            size = await store.read(lambda conn: conn.execute(dialect_of(conn).home_bytes()).fetchone()[0])
        db_bytes = size if db else sum(p.stat().st_size for p in Path(tmp).glob("bench.db*"))
    return {
        "tokens": loaded_tokens,
        "files": len(loaded.objects),
        "counter": counter_name,
        "generate_seconds": round(generate_s, 2),
        "load_seconds": round(load_s, 2),
        "load_tokens_per_s": round(loaded_tokens / load_s),
        "search_p50_ms": _percentile(search_ms, 50),
        "search_p95_ms": _percentile(search_ms, 95),
        "read_p50_ms": _percentile(read_ms, 50),
        "read_p95_ms": _percentile(read_ms, 95),
        "db_bytes": db_bytes,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


async def _time_searches(contexts: ContextStore, corpus: Corpus, n: int) -> list[float]:
    """Rare words, common words and mixes, k=5, as the tools search."""
    queries = []
    for index in range(n):
        kind = index % 3
        if kind == 0:
            queries.append(" ".join(corpus.rare_words(1)))
        elif kind == 1:
            queries.append(" ".join(corpus.rare_words(1) + corpus.common_words(1)))
        else:
            queries.append(" ".join(corpus.rare_words(2) + corpus.common_words(1)))
    timings = []
    for query in queries:
        started = time.perf_counter()
        await contexts.search(query, k=5)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


async def _time_reads(contexts: ContextStore, objects: list[Any], n: int) -> list[float]:
    """Forty-line reads at random places, as `context_read` does them."""
    rng = random.Random(11)
    timings = []
    for _ in range(n):
        obj = rng.choice(objects)
        start = rng.randint(1, max(1, obj.lines - 40))
        started = time.perf_counter()
        await contexts.read(obj.id, start, start + 39, max_tokens=2_000)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def _percentile(values: list[float], pct: int) -> float:
    if len(values) < 2:
        return round(values[0], 2) if values else 0.0
    return round(statistics.quantiles(values, n=100, method="inclusive")[pct - 1], 2)


if __name__ == "__main__":
    size, n_queries, n_reads, counter_choice, home = sys.argv[1:6]
    result = anyio.run(measure, int(size), int(n_queries), int(n_reads), counter_choice, home)
    print(json.dumps(result))
