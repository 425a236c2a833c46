"""`loci bench memory-peer`: Loci's compat server against the reference memory server.

One workload runs side by side, over stdio MCP, against the reference server
(`npx -y @modelcontextprotocol/server-memory`, its JSONL file in a temporary
directory) and against Loci's drop-in (`python -m loci.servers.memory_compat`,
a fresh SQLite file): create `--entities` entities with two observations
each and about two relations each, in calls of `--batch` items, then time
`--searches` exact-name `search_nodes` and as many two-name `open_nodes`.
The servers run one after the other, so they never share the two cores.

It reports each server's per-call p50 for writes, searches and opens, the
ratios (the reference's p50 over Loci's), the p50 of each kind of write
apart (a call of entities with their observations, a call of relations:
there are twice as many relation calls, so the p50 over all writes is a
relation call's), each server's CPU time per call in
each phase (the entity and the relation writes apart too) and their ratios
(bench/servers/cpu.py: on a shared machine a round trip is mostly waiting for a
core, the CPU a server spends is not), and the share of exact-name
lookups and opens where both returned the same entities (compared as sets:
Loci ranks search results, the reference returns them in file order).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from loci.bench.recall.memory import make_sentences
from loci.bench.servers.cpu import ServerCpu
from loci.memory.errors import UsageError

__all__ = ["add_arguments", "run"]

TYPES = ("person", "organization", "project", "place", "event")
REPO = Path(__file__).resolve().parents[2]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=10, help="entities or relations per write call")
    parser.add_argument("--searches", type=int, default=100, help="exact-name searches and opens to time")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=3_600.0, help="seconds for the whole run")


def workload(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    n = args.entities
    names = [f"Entity_{i:06d}" for i in range(n)]
    notes = make_sentences(2 * n, args.seed)
    entities = [
        {"name": names[i], "entityType": TYPES[i % len(TYPES)], "observations": notes[2 * i : 2 * i + 2]}
        for i in range(n)
    ]
    relations = [{"from": names[i], "to": names[(i + 1) % n], "relationType": "works_with"} for i in range(n)]
    relations += [{"from": names[i], "to": names[rng.randrange(n)], "relationType": "knows"} for i in range(n)]
    looked_up = [rng.choice(names) for _ in range(args.searches)]
    opened = [[rng.choice(names), rng.choice(names)] for _ in range(args.searches)]
    return {"entities": entities, "relations": relations, "searches": looked_up, "opens": opened}


async def _drive(params: StdioServerParameters, work: dict[str, Any], batch: int) -> dict[str, Any]:
    writes: dict[str, list[float]] = {"entities": [], "relations": []}
    searches, opens = [], []
    search_answers, open_answers = [], []
    started = time.perf_counter()
    servers = ServerCpu()
    cpu: dict[str, float] = {}
    async with Client(params) as client:
        cpu["start"] = servers()
        for key, tool in (("entities", "create_entities"), ("relations", "create_relations")):
            items = work[key]
            for start in range(0, len(items), batch):
                t0 = time.perf_counter()
                result = await client.call_tool(tool, {key: items[start : start + batch]})
                writes[key].append(time.perf_counter() - t0)
                if result.is_error:
                    raise UsageError(f"{tool} failed: {result.content}")
            cpu[key] = servers()
        cpu["written"] = cpu["relations"]
        for name in work["searches"]:
            t0 = time.perf_counter()
            result = await client.call_tool("search_nodes", {"query": name})
            searches.append(time.perf_counter() - t0)
            search_answers.append(sorted(e["name"] for e in result.structured_content["entities"]))
        cpu["searched"] = servers()
        for names in work["opens"]:
            t0 = time.perf_counter()
            result = await client.call_tool("open_nodes", {"names": names})
            opens.append(time.perf_counter() - t0)
            open_answers.append(sorted(e["name"] for e in result.structured_content["entities"]))
        cpu["opened"] = servers()

    def ms(values: list[float]) -> float:
        return round(statistics.median(values) * 1000, 3)

    every_write = writes["entities"] + writes["relations"]
    return {
        "write_p50_ms": ms(every_write),
        "entity_write_p50_ms": ms(writes["entities"]),
        "relation_write_p50_ms": ms(writes["relations"]),
        "search_p50_ms": ms(searches),
        "open_p50_ms": ms(opens),
        "write_calls": len(every_write),
        "write_cpu_ms_per_call": ServerCpu.per_call(cpu["start"], cpu["written"], len(every_write)),
        "entity_write_cpu_ms_per_call": ServerCpu.per_call(cpu["start"], cpu["entities"], len(writes["entities"])),
        "relation_write_cpu_ms_per_call": ServerCpu.per_call(
            cpu["entities"], cpu["relations"], len(writes["relations"])
        ),
        "search_cpu_ms_per_call": ServerCpu.per_call(cpu["written"], cpu["searched"], len(searches)),
        "open_cpu_ms_per_call": ServerCpu.per_call(cpu["searched"], cpu["opened"], len(opens)),
        "total_s": round(time.perf_counter() - started, 2),
        "answers": (search_answers, open_answers),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    npx = shutil.which("npx")
    if npx is None:
        raise UsageError("memory-peer needs Node.js: npx was not found on PATH")
    work = workload(args)
    with tempfile.TemporaryDirectory(prefix="loci-peer-") as tmp:
        reference = StdioServerParameters(
            command=npx,
            args=["-y", "@modelcontextprotocol/server-memory"],
            env={"MEMORY_FILE_PATH": str(Path(tmp) / "memory.jsonl"), "PATH": os.environ.get("PATH", "")},
        )
        loci = StdioServerParameters(
            command=sys.executable,
            args=["-m", "loci.servers.memory_compat", "--db", str(Path(tmp) / "loci.db")],
            cwd=str(REPO),
        )
        with anyio.fail_after(args.timeout):
            theirs = await _drive(reference, work, args.batch)
            ours = await _drive(loci, work, args.batch)
    (their_search, their_open), (our_search, our_open) = theirs.pop("answers"), ours.pop("answers")

    def ratio(key: str) -> float | None:
        return round(theirs[key] / ours[key], 2) if ours[key] else None

    return {
        "entities": args.entities,
        "relations": len(work["relations"]),
        "batch": args.batch,
        "reference": theirs,
        "loci": ours,
        "write_ratio": ratio("write_p50_ms"),
        "entity_write_ratio": ratio("entity_write_p50_ms"),
        "relation_write_ratio": ratio("relation_write_p50_ms"),
        "search_ratio": ratio("search_p50_ms"),
        "open_ratio": ratio("open_p50_ms"),
        "write_cpu_ratio": ratio("write_cpu_ms_per_call"),
        "entity_write_cpu_ratio": ratio("entity_write_cpu_ms_per_call"),
        "relation_write_cpu_ratio": ratio("relation_write_cpu_ms_per_call"),
        "search_cpu_ratio": ratio("search_cpu_ms_per_call"),
        "open_cpu_ratio": ratio("open_cpu_ms_per_call"),
        "exact_name_agreement": _agreement(their_search, our_search),
        "open_agreement": _agreement(their_open, our_open),
    }


def _agreement(theirs: list[list[str]], ours: list[list[str]]) -> float:
    if not theirs:
        return 1.0
    return round(sum(a == b for a, b in zip(theirs, ours, strict=True)) / len(theirs), 4)
