"""Benchmark workloads behind `loci bench NAME --json`.

Each workload is a module with `add_arguments(parser)` and
`async def run(args) -> dict`; the dict is printed as one JSON object. Where
a baseline exists (naive full history, plain BM25, the reference MCP memory
server) it is measured in the same run and reported as a ratio. The
command itself is `bench.cli`, which `runtime.cli.main` lists by name.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["BENCHES", "load"]

BENCHES: dict[str, str] = {
    "memory": "bench.memory",
    "memory-peer": "bench.memory_peer",
    "recall": "bench.recall",
    "context-store": "bench.context_store",
    "navigate": "bench.navigate",
    "context": "bench.context",
    "latency": "bench.latency",
    "llama-modes": "bench.llama_modes",
    "evolution": "bench.evolution",
    "mcp": "bench.mcp",
    "team": "bench.team",
    "sessions": "bench.sessions",
    "live": "bench.live",
    "digest": "bench.digest",
    "qa": "bench.qa",
    "hooks": "bench.hooks",
    "startup": "bench.startup",
    "ui": "bench.ui",
    "first-week": "bench.first_week",
}


def load(name: str) -> ModuleType:
    return importlib.import_module(BENCHES[name])
