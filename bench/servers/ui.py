"""`loci bench ui`: how soon the page of `loci ui` first draws the memory graph, at 100,000 nodes.

Builds the `bench memory` graph (`--nodes` facts, about three edges each),
serves it with `loci ui` in a subprocess as a user would, and loads the
graph view `--loads` times in headless Chromium (Debian's, driven by
Playwright), each time in a fresh browser context so nothing is cached.
`first_draw_s` is the median time from the start of navigation to the end
of the first draw of the graph (the page records `performance.now()` then):
the page, its scripts, the API's read of the most used nodes and their
edges, the layout and the canvas. The view draws a bounded piece
(`drawn_nodes` of `nodes`), never the whole graph. Goal: under 2 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from loci.bench.recall.memory import build_graph
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError
from loci.memory.graph.graph import Graph

__all__ = ["add_arguments", "run"]

CHROMIUM = "/usr/bin/chromium"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nodes", type=int, default=100_000, help="facts in the synthetic graph")
    parser.add_argument("--edges-per-node", type=float, default=3.0, help="edges per node on average")
    parser.add_argument("--loads", type=int, default=5, help="page loads to time")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--chromium", default=CHROMIUM, help="the Chromium executable")
    parser.add_argument(
        "--db", type=Path, default=None, help="serve this home as it is (e.g. one `bench memory --db` built)"
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    if not Path(args.chromium).exists():
        raise UsageError(f"no Chromium at {args.chromium}: apt-get install chromium, or pass --chromium PATH")
    if args.db is not None and not args.db.is_file():
        raise UsageError(f"--db {args.db}: no such home")
    with tempfile.TemporaryDirectory(prefix="loci-bench-ui-") as tmp:
        db = args.db or Path(tmp) / "bench.db"
        started = time.perf_counter()
        if args.db is None:
            async with await Store.open(db) as store:
                graph = Graph(store)
                await build_graph(
                    graph, random.Random(args.seed), args.nodes, args.edges_per_node, 5_000, seed=args.seed
                )
        build_s = time.perf_counter() - started
        async with await Store.open(db) as store:
            totals = await Graph(store).stats()
        process, url = await anyio.to_thread.run_sync(_serve, db)
        try:
            draws, drawn = await _loads(url, args.loads, args.chromium)
        finally:
            process.terminate()
            process.communicate(timeout=30)
    return {
        "nodes": totals["nodes"],
        "edges": totals["edges"],
        "drawn_nodes": drawn,
        "loads": len(draws),
        "first_draw_s": round(statistics.median(draws), 3),
        "first_draw_max_s": round(max(draws), 3),
        "build_s": round(build_s, 1),
    }


def _serve(db: Path) -> tuple[subprocess.Popen[str], str]:
    """`loci ui` on a free port; its URL once it listens."""
    command = [sys.executable, "-m", "loci.runtime.cli.main", "ui", "--db", str(db), "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()  # the first line is the URL, printed once the socket listens
    if "the page is at " not in line:
        process.kill()
        raise UsageError(f"loci ui did not start: {line.strip() or 'no output'}")
    return process, line.split("the page is at ", 1)[1].strip()


async def _loads(url: str, loads: int, chromium: str) -> tuple[list[float], int]:
    from playwright.async_api import async_playwright

    draws: list[float] = []
    drawn = 0
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        try:
            for _ in range(max(1, loads)):
                # Playwright polls a waiting predicate with eval, which the page's CSP refuses; the draw is the same.
                context = await browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)
                page = await context.new_page()
                await page.goto(url)
                await page.wait_for_function("window.lociFirstDraw !== undefined", timeout=60_000)
                draws.append(await page.evaluate("window.lociFirstDraw") / 1000)
                drawn = await page.evaluate("graph.piece.nodes.length")
                await context.close()
        finally:
            await browser.close()
    return draws, drawn
