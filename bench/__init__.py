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
    "memory": "loci.bench.recall.memory",
    "memory-peer": "loci.bench.servers.memory_peer",
    "recall": "loci.bench.recall.recall",
    "context-store": "loci.bench.context.store",
    "navigate": "loci.bench.context.navigate",
    "context": "loci.bench.context.context",
    "latency": "loci.bench.model.latency",
    "llama-modes": "loci.bench.model.llama_modes",
    "evolution": "loci.bench.evolution.evolution",
    "mcp": "loci.bench.servers.mcp",
    "team": "loci.bench.servers.team",
    "sessions": "loci.bench.servers.sessions",
    "live": "loci.bench.servers.live",
    "digest": "loci.bench.digest.digest",
    "qa": "loci.bench.qa.qa",
    "hooks": "loci.bench.servers.hooks",
    "startup": "loci.bench.servers.startup",
    "ui": "loci.bench.servers.ui",
    "first-week": "loci.bench.first_week.first_week",
}


def load(name: str) -> ModuleType:
    return importlib.import_module(BENCHES[name])
