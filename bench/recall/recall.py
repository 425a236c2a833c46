"""`loci bench recall`: evidence recall@k on conversational memory (LoCoMo JSON or BEAM chats).

`--data` is a LoCoMo-format JSON file or a BEAM folder (a chat with its
probing questions, or a `chats/100K`-style folder of them); bench/recall/data.py
reads both into conversations and questions with their evidence refs and
category. A sample that cannot be read or measured is listed in `failed`
with its reason, and the others are measured; a message too long to store is
skipped alone (`skipped_turns`, memory/imports/writer.py).

Each sample gets its own graph, imported as `loci memory import` imports the
file (memory/imports/writer.py): every turn is a node ("Speaker: text", the
shared image's caption, relative dates resolved against the session date),
linked to the next turn of its session and to the few other turns naming the
same entity. For each question Loci recalls the top k; a question's evidence
recall@k is the share of its evidence turns among the k nodes returned,
averaged over the questions. In the same run and on the same index: plain
BM25 (`baseline_bm25`) and Loci without the graph (`ablation_no_graph`: the
same ranking with no spreading along edges). Recall runs with
`record=False`, so one question's activation does not steer the next.

Keys: `recall_at_K` for each cut-off K (flat keys, at the top level for Loci
and inside `baseline_bm25` and `ablation_no_graph`), `by_category` (the same
keys per category), `questions`, `newest_at_1` (for the questions about a
changed fact, BEAM's knowledge updates and contradictions: the share whose
first result is the newest statement, per system and category),
`query_ms_p50` (Loci's median recall time; `baseline_query_ms_p50` for
BM25), and `graph_below_ablation`: each cut-off, overall and in each category
of at least `JUDGED` questions, where Loci is below its no-graph ablation by
more than `TOLERANCE` (the graph must earn its place; an empty list says it
did), and `graph_moves`: at each cut-off, overall and per category, how many
questions the graph gave more evidence in the first k than the ablation did
(`up`) and how many less (`down`), so a shortfall shows as one question
moved or as many. `--embed SPEC` adds recall by meaning (vectors fused with BM25,
memory/graph/recall.py) to Loci and the ablation; the default, `none`,
measures lexical plus graph, offline.

The bundled `bench/data/recall_generated.json` (written by
`python -m loci.bench.recall.generate`) is the default `--data`. The real data
is kept aside to measure the project.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Awaitable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from loci.bench.recall.data import Failed, Question, load_data
from loci.memory.engines.base import Engine
from loci.memory.engines.select import use_engine
from loci.memory.errors import LociError, UsageError
from loci.memory.graph.graph import Graph
from loci.memory.graph.ranking import Recalled
from loci.memory.graph.recall import Recall
from loci.memory.imports.ledger import SESSION, imported
from loci.memory.imports.writer import import_conversation
from loci.memory.location import is_postgres
from loci.memory.projects import writable_project
from loci.runtime.models.embedders import embedder_from_spec

__all__ = [
    "DEFAULT_DATA",
    "JUDGED",
    "TOLERANCE",
    "add_arguments",
    "ask_sample",
    "below_ablation",
    "graph_moves",
    "run",
    "summary",
]

DEFAULT_DATA = Path(__file__).parents[1] / "data" / "recall_generated.json"
SYSTEMS = ("loci", "bm25", "no_graph")
JUDGED = 10  # the fewest questions a category needs for the graph to be judged in it
TOLERANCE = 0.01


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="a LoCoMo JSON file or a BEAM chat folder (or a folder of them)"
    )
    parser.add_argument("--k", default="1,5,10,20", help="comma-separated cut-offs")
    parser.add_argument(
        "--db", default=None, help="an empty postgresql://... database: each sample in a project of its own there"
    )
    parser.add_argument(
        "--embed", default="none", help="embedder for recall by meaning: none, llama:PATH.gguf or openai:MODEL[@URL]"
    )


def _ks(text: str) -> list[int]:
    try:
        ks = sorted({int(part) for part in str(text).split(",") if part.strip()})
    except ValueError as exc:
        raise UsageError(f"--k takes numbers separated by commas, such as 1,5,10; not {text!r}") from exc
    if not ks or ks[0] < 1:
        raise UsageError("--k needs at least one cut-off of 1 or more")
    return ks


Scores = dict[str, list[tuple[str, list[float]]]]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    ks = _ks(args.k)
    samples, failed = load_data(args.data)
    embedder = embedder_from_spec(args.embed)
    scores: Scores = {name: [] for name in SYSTEMS}
    newest: Scores = {name: [] for name in SYSTEMS}
    times: dict[str, list[float]] = {name: [] for name in SYSTEMS}
    ingest_s, turns, skipped, measured = 0.0, 0, [], 0
    with tempfile.TemporaryDirectory(prefix="loci-recall-") as tmp:
        for index, sample in enumerate(samples):
            mine: Scores = {name: [] for name in SYSTEMS}
            mine_newest: Scores = {name: [] for name in SYSTEMS}
            try:
                async with _home(args.db, Path(tmp) / f"sample{index}.db") as store:
                    graph = Graph(store, embedder=embedder, project=f"sample-{index}")
                    started = time.perf_counter()
                    done = await import_conversation(graph, sample.conversation, cause="bench:recall")
                    ingest_s += time.perf_counter() - started
                    await ask_sample(graph, sample.questions, done.key, ks, mine, times, mine_newest)
            except LociError as exc:
                failed.append(Failed(sample.name, str(exc)))
                continue
            measured += 1
            turns += len(sample.conversation.turns)
            skipped += [{"sample": sample.name, "turn": ref, "reason": why} for ref, why in done.skipped]
            for name in SYSTEMS:
                scores[name] += mine[name]
                newest[name] += mine_newest[name]
    engine = "postgresql" if args.db else "sqlite"
    result: dict[str, Any] = {"data": str(args.data), "engine": engine, "embedder": args.embed, "samples": measured}
    result.update(turns=turns, k=ks, failed=[{"sample": f.name, "reason": f.reason} for f in failed])
    result["skipped_turns"] = skipped
    result.update(summary(scores["loci"], ks))
    result["baseline_bm25"] = summary(scores["bm25"], ks)
    result["ablation_no_graph"] = summary(scores["no_graph"], ks)
    result["graph_below_ablation"] = below_ablation(result, result["ablation_no_graph"], ks)
    result["graph_moves"] = graph_moves(scores["loci"], scores["no_graph"], ks)
    result["newest_at_1"] = {name: summary(newest[name], [1]) for name in SYSTEMS}
    result["ingest_s"] = round(ingest_s, 4)
    result["query_ms_p50"] = _median(times["loci"])
    result["baseline_query_ms_p50"] = _median(times["bm25"])
    result["ablation_query_ms_p50"] = _median(times["no_graph"])
    return result


def _home(db: str | None, path: Path) -> AbstractAsyncContextManager[Engine]:
    """A sample's home: its own SQLite file at `path`, or the PostgreSQL database `db` (a project per sample)."""
    if db is None:
        return use_engine(path)
    if not is_postgres(db):
        raise UsageError("bench recall --db takes a postgresql://... database; SQLite samples each get their own file")
    return use_engine(db)


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3) if values else 0.0


async def ask_sample(
    graph: Graph,
    questions: list[Question],
    key: str,
    ks: list[int],
    scores: Scores,
    times: dict[str, list[float]],
    newest: Scores | None = None,
) -> None:
    """Ask a sample's questions of a graph its conversation was imported into (under `key`), adding the scores
    (and, for the questions that have one, whether the newest statement came first)."""
    await _ask(Recall(graph), questions, await _dia_of(graph, key), ks, scores, times, newest)


async def _dia_of(graph: Graph, key: str) -> dict[int, set[str]]:
    """node id -> the dia_ids it holds (identical turns share a node), from the import ledger of the graph's
    project."""
    project = writable_project(graph.project)
    rows = await graph.store.read(lambda db: imported(db.conn, key, project))
    dia_of: dict[int, set[str]] = {}
    for ref, node_id in rows.items():
        if node_id is not None and not ref.startswith(SESSION):
            dia_of.setdefault(node_id, set()).add(ref)
    return dia_of


async def _ask(
    recall: Recall,
    questions: list[Question],
    dia_of: dict[int, set[str]],
    ks: list[int],
    scores: Scores,
    times: dict[str, list[float]],
    newest: Scores | None,
) -> None:
    known = set().union(*dia_of.values()) if dia_of else set()
    systems = {
        "loci": lambda q: _ids(recall.recall(q, k=ks[-1], kinds=["semantic"], record=False)),
        "no_graph": lambda q: _ids(recall.recall(q, k=ks[-1], kinds=["semantic"], record=False, hops=0)),
        "bm25": lambda q: recall.bm25(q, k=ks[-1], kinds=["semantic"]),
    }
    for question in questions:
        evidence = set(question.evidence) & known
        if not evidence:
            continue
        for name, ask in systems.items():
            started = time.perf_counter()
            try:
                found = await ask(question.text)
            except UsageError:
                found = []
            times[name].append((time.perf_counter() - started) * 1000)
            scores[name].append((question.category, [_share(found[:k], dia_of, evidence) for k in ks]))
            wanted = set(question.newest) & known
            if newest is not None and wanted:
                newest[name].append((question.category, [_share(found[:1], dia_of, wanted)]))


async def _ids(recalled: Awaitable[list[Recalled]]) -> list[int]:
    return [r.node.id for r in await recalled]


def _share(ids: list[int], dia_of: dict[int, set[str]], evidence: set[str]) -> float:
    hit = set().union(*(dia_of.get(i, set()) for i in ids)) if ids else set()
    return len(hit & evidence) / len(evidence)


def summary(rows: list[tuple[str, list[float]]], ks: list[int]) -> dict[str, Any]:
    def mean_at(selected: list[list[float]]) -> dict[str, float]:
        return {
            f"recall_at_{k}": round(statistics.fmean(r[i] for r in selected), 4) if selected else 0.0
            for i, k in enumerate(ks)
        }

    out: dict[str, Any] = {"questions": len(rows), **mean_at([r for _, r in rows])}
    categories = sorted({c for c, _ in rows})
    out["by_category"] = {
        c: {"questions": sum(1 for cat, _ in rows if cat == c), **mean_at([r for cat, r in rows if cat == c])}
        for c in categories
    }
    return out


def below_ablation(loci: dict[str, Any], ablation: dict[str, Any], ks: list[int]) -> list[dict[str, Any]]:
    """The cells (`category`: `all` or a category of at least `JUDGED` questions, `k`) where Loci's recall is
    below its no-graph ablation's by more than `TOLERANCE`, with both values."""
    rows = [("all", loci, ablation)] + [
        (category, mine, ablation["by_category"][category])
        for category, mine in loci["by_category"].items()
        if mine["questions"] >= JUDGED and category in ablation["by_category"]
    ]
    return [
        {"category": category, "k": k, "loci": mine[key], "no_graph": theirs[key]}
        for category, mine, theirs in rows
        for k in ks
        if mine[(key := f"recall_at_{k}")] < theirs[key] - TOLERANCE
    ]


def graph_moves(
    loci: list[tuple[str, list[float]]], ablation: list[tuple[str, list[float]]], ks: list[int]
) -> dict[str, dict[str, dict[str, int]]]:
    """Per `all` and per category, per cut-off: the questions where Loci's share of evidence in the first k is
    above the ablation's (`up`) and below it (`down`). The two lists hold the same questions in the same order."""
    moves: dict[str, dict[str, dict[str, int]]] = {}
    for (category, mine), (_, theirs) in zip(loci, ablation, strict=True):
        for group in ("all", category):
            cells = moves.setdefault(group, {str(k): {"up": 0, "down": 0} for k in ks})
            for k, a, b in zip(ks, mine, theirs, strict=True):
                if a != b:
                    cells[str(k)]["up" if a > b else "down"] += 1
    return moves
