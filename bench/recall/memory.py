"""`loci bench memory`: the graph at scale, insert rate and recall latency.

Builds a synthetic graph of `--nodes` facts with realistic sentences (people,
actions, things, places, days, drawn from a vocabulary of a few thousand
words, so BM25 sees common and rare terms as in real notes) and about
`--edges-per-node` weighted edges each, half between nearby nodes (facts
written together) and half at random. Nodes go in through `Graph.add_many`
in batches, edges through `Graph.link_many`, each batch one transaction.

Then it times `--queries` recalls (two or three words taken from a random
node, k=10, recording activation as a real recall does) and as many
one-hop neighbour reads. Goals on a 2-core machine at 100,000 nodes: recall
p50 <= 8 ms, p95 <= 15 ms, insert >= 20,000 nodes/s. `--db postgresql://…`
builds the graph in that (empty) PostgreSQL database instead and reports its
size from the server; the result names its `engine`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loci.memory.engines.base import Engine
from loci.memory.engines.dialects import dialect_of
from loci.memory.engines.select import use_engine
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.graph.recall import Recall
from loci.memory.location import is_postgres

__all__ = ["Built", "add_arguments", "build_graph", "make_sentences", "percentile", "run"]

FIRST = (
    "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy Rupert Sybil Trent Victor Walter"
    " Yara Zoe Maya Leo Nora Omar Priya Quinn Ravi Sofia Tariq Uma Vera Wen Xavier Yusuf Zara Amir Bea Cyrus Dina"
).split()
VERBS = (
    "bought sold fixed painted borrowed lost found cooked visited repaired planted ordered shipped reviewed wrote read"
    " booked cancelled renewed moved cleaned tested deployed migrated measured photographed recorded shared tuned"
).split()
ADJECTIVES = (
    "old new red blue green quiet noisy heavy light cheap expensive broken shiny rusty wooden metal tiny huge spare"
    " vintage modern fragile sturdy electric manual digital analog local remote primary backup"
).split()
PLACES = (
    "Paris Lisbon Berlin Oslo Kyoto Lima Nairobi Austin Denver Porto Seville Turin Ghent Krakow Tallinn Bergen Cork"
    " Dundee Leeds Malmo Utrecht Basel Graz Brno Split Bari Nantes Lyon Bilbao Aarhus"
).split()
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
FILLER = {"next", "with", "note"}
SYLLABLES = "ka lo mi ner to va shi ru den pol ar vik sel mon tri bel gor fen lux dra".split()


def _nouns(rng: random.Random, count: int = 2_500) -> list[str]:
    nouns: set[str] = set()
    while len(nouns) < count:
        nouns.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))))
    return sorted(nouns)


def make_sentences(count: int, seed: int = 7) -> list[str]:
    """`count` distinct note-like sentences; noun frequency is skewed, as in real text."""
    rng = random.Random(seed)
    nouns = _nouns(rng)
    weights = [1.0 / (rank + 1) ** 0.8 for rank in range(len(nouns))]
    picked = rng.choices(nouns, weights, k=count * 2)
    out = []
    for i in range(count):
        who, other = rng.choice(FIRST), rng.choice(FIRST)
        out.append(
            f"{who} {rng.choice(VERBS)} the {rng.choice(ADJECTIVES)} {picked[2 * i]} in {rng.choice(PLACES)}"
            f" on {rng.choice(DAYS)} with {other}, next to the {picked[2 * i + 1]} (note {i})"
        )
    return out


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nodes", type=int, default=100_000, help="facts in the synthetic graph")
    parser.add_argument("--edges-per-node", type=float, default=3.0, help="edges per node on average")
    parser.add_argument("--queries", type=int, default=200, help="recalls and neighbour reads to time")
    parser.add_argument("--batch", type=int, default=5_000, help="nodes per insert transaction")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--db", default=None, help="build the graph here (a file, or an empty postgresql://... database)"
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.db and is_postgres(args.db):
        async with use_engine(args.db) as store:
            held = await store.read(lambda conn: conn.execute("SELECT count(*) FROM memory_nodes").fetchone()[0])
            if held:
                raise UsageError(f"bench memory builds its graph in an empty database; {store.location} holds {held}")
            result = await _measure(store, args)
            size = await store.read(lambda conn: conn.execute(dialect_of(conn).home_bytes()).fetchone()[0])
        return {"engine": "postgresql", **result, "db_bytes": size}
    with tempfile.TemporaryDirectory(prefix="loci-bench-") as tmp:
        path = Path(args.db) if args.db else Path(tmp) / "bench.db"
        async with await Store.open(path) as store:
            result = await _measure(store, args)
        wal = Path(f"{path}-wal")
        result["db_bytes"] = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
        return {"engine": "sqlite", **result}


@dataclass(frozen=True)
class Built:
    """The synthetic graph as built: its node ids and texts, its edge count, and the time each part took."""

    ids: list[int]
    texts: list[str]
    edges: int
    insert_s: float
    edge_s: float


async def build_graph(
    graph: Graph, rng: random.Random, nodes: int, edges_per_node: float, batch: int, *, seed: int
) -> Built:
    """The `bench memory` graph: `nodes` sentences (from `seed`) in batches of `batch`, then about
    `edges_per_node` edges each, drawn with `rng`."""
    texts = make_sentences(nodes, seed)
    started = time.perf_counter()
    ids: list[int] = []
    for start in range(0, len(texts), batch):
        chunk = [NewNode(text) for text in texts[start : start + batch]]
        ids.extend(node_id for node_id, _ in await graph.add_many(chunk, cause="bench"))
    insert_s = time.perf_counter() - started

    links = _random_links(rng, ids, edges_per_node)
    started = time.perf_counter()
    edges = 0
    for start in range(0, len(links), batch * 4):
        edges += await graph.link_many(links[start : start + batch * 4], cause="bench")
    return Built(ids, texts, edges, insert_s, time.perf_counter() - started)


async def _measure(store: Engine, args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    graph = Graph(store)
    built = await build_graph(graph, rng, args.nodes, args.edges_per_node, args.batch, seed=args.seed)
    ids, texts, edges, insert_s, edge_s = built.ids, built.texts, built.edges, built.insert_s, built.edge_s

    recall = Recall(graph)
    queries = [_query(rng, rng.choice(texts)) for _ in range(args.queries)]
    for query in queries[:5]:
        await recall.recall(query, k=10)
    recall_ms = []
    for query in queries:
        t0 = time.perf_counter()
        await recall.recall(query, k=10)
        recall_ms.append((time.perf_counter() - t0) * 1000)
    neighbor_ms = []
    for node_id in rng.sample(ids, min(len(ids), args.queries)):
        t0 = time.perf_counter()
        await graph.neighbors(node_id, depth=1)
        neighbor_ms.append((time.perf_counter() - t0) * 1000)
    return {
        "nodes": len(set(ids)),
        "edges": edges,
        "insert_nodes_per_s": round(len(ids) / insert_s, 1),
        "insert_edges_per_s": round(edges / edge_s, 1) if edge_s else 0.0,
        "recall_p50_ms": round(statistics.median(recall_ms), 3),
        "recall_p95_ms": round(percentile(recall_ms, 0.95), 3),
        "neighbors_p50_ms": round(statistics.median(neighbor_ms), 3),
        "queries": len(queries),
    }


def _random_links(rng: random.Random, ids: list[int], per_node: float) -> list[tuple[int, int, str, float]]:
    """About `per_node` distinct edges per node: half to a near node, half to a random one."""
    total = min(int(len(ids) * per_node), len(ids) * (len(ids) - 1))
    seen: set[tuple[int, int]] = set()
    links = []
    i = 0
    while len(links) < total and i < 50 * total:
        src = i % len(ids)
        step = rng.choice((-3, -2, -1, 1, 2, 3)) if i % 2 == 0 else rng.randrange(1, len(ids))
        dst = (src + step) % len(ids)
        i += 1
        if dst != src and (src, dst) not in seen:
            seen.add((src, dst))
            links.append((ids[src], ids[dst], "related", round(rng.uniform(0.1, 1.0), 3)))
    return links


def _query(rng: random.Random, sentence: str) -> str:
    """Two or three content words of a sentence (not the filler every generated sentence shares)."""
    words = [w.strip(",()") for w in sentence.split() if len(w) > 3 and not w.strip("()").isdigit()]
    words = [w for w in words if w not in FILLER]
    return " ".join(rng.sample(words, min(len(words), rng.choice((2, 3)))))
