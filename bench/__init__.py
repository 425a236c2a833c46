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
    "memory": "loci.bench.memory",
    "memory-peer": "loci.bench.memory_peer",
    "recall": "loci.bench.recall",
    "context-store": "loci.bench.context_store",
    "navigate": "loci.bench.navigate",
    "context": "loci.bench.context",
    "latency": "loci.bench.latency",
    "llama-modes": "loci.bench.llama_modes",
    "evolution": "loci.bench.evolution",
    "mcp": "loci.bench.mcp",
    "team": "loci.bench.team",
    "sessions": "loci.bench.sessions",
    "live": "loci.bench.live",
    "digest": "loci.bench.digest",
    "qa": "loci.bench.qa",
    "hooks": "loci.bench.hooks",
    "startup": "loci.bench.startup",
    "ui": "loci.bench.ui",
    "first-week": "loci.bench.first_week",
}


def load(name: str) -> ModuleType:
    return importlib.import_module(BENCHES[name])
