"""`loci bench recall`: evidence recall@k on conversational memory (the LoCoMo format).

The file is a list of samples. A sample's `conversation` has `speaker_a`,
`speaker_b`, and for each session N `session_N_date_time` and `session_N`, a
list of turns `{speaker, dia_id, text}`; its `qa` is a list of
`{question, answer, evidence: [dia_id, ...], category}`. Category 5
(adversarial) questions are excluded, as is usual.

Each sample gets its own graph: every turn is a semantic node ("Speaker:
text", with speaker, session date and dia_id in its metadata), consecutive
turns of a session are linked (conversation is where related facts sit).
For each question Loci recalls the top k; a question's evidence recall@k is
the share of its evidence turns among them. The baseline is plain BM25 over
the same turns and the same index, measured in the same run. Recall runs
with `record=False`, so one question's activation does not steer the next.

The bundled `bench/data/locomo_synthetic.json` is a small file written for
the tests. The real LoCoMo data is kept aside to measure the project.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from memory.errors import UsageError
from memory.graph import Graph, NewNode
from memory.recall import Recall
from memory.store import Store

__all__ = ["DEFAULT_DATA", "add_arguments", "run"]

DEFAULT_DATA = Path(__file__).parent / "data" / "locomo_synthetic.json"
ADJACENT_WEIGHT = 0.3
_SESSION = re.compile(r"^session_(\d+)$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="a LoCoMo-format JSON file")
    parser.add_argument("--k", default="1,5,10,20", help="comma-separated cut-offs")


def _ks(text: str) -> list[int]:
    try:
        ks = sorted({int(part) for part in str(text).split(",") if part.strip()})
    except ValueError as exc:
        raise UsageError(f"--k takes numbers separated by commas, such as 1,5,10; not {text!r}") from exc
    if not ks or ks[0] < 1:
        raise UsageError("--k needs at least one cut-off of 1 or more")
    return ks


def _load(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise UsageError(f"no benchmark file at {path}") from exc
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path} is not a readable JSON file: {exc}") from exc
    if not isinstance(data, list) or not all(isinstance(s, dict) and "conversation" in s for s in data):
        raise UsageError(f"{path} is not in the LoCoMo format (a list of samples with a conversation)")
    return data


def turns_of(sample: dict[str, Any]) -> list[tuple[int, str, dict[str, Any]]]:
    """`(session number, session date, turn)` for every turn, in order."""
    conversation = sample["conversation"]
    sessions = sorted(int(m.group(1)) for key in conversation if (m := _SESSION.match(key)))
    return [
        (number, str(conversation.get(f"session_{number}_date_time", "")), turn)
        for number in sessions
        for turn in conversation[f"session_{number}"] or []
    ]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    ks = _ks(args.k)
    samples = _load(args.data)
    scores: dict[str, list[tuple[str, list[float]]]] = {"loci": [], "bm25": []}
    times: dict[str, list[float]] = {"loci": [], "bm25": []}
    ingest_s, turns = 0.0, 0
    with tempfile.TemporaryDirectory(prefix="loci-recall-") as tmp:
        for index, sample in enumerate(samples):
            async with await Store.open(Path(tmp) / f"sample{index}.db") as store:
                graph = Graph(store)
                started = time.perf_counter()
                dia_of = await _ingest(graph, sample)
                ingest_s += time.perf_counter() - started
                turns += len(turns_of(sample))
                await _ask(Recall(graph), sample, dia_of, ks, scores, times)
    result: dict[str, Any] = {"data": str(args.data), "samples": len(samples), "turns": turns, "k": ks}
    result.update(_summary(scores["loci"], ks))
    result["baseline_bm25"] = _summary(scores["bm25"], ks)
    result["ingest_s"] = round(ingest_s, 4)
    result["query_ms_p50"] = round(statistics.median(times["loci"]), 3) if times["loci"] else 0.0
    result["baseline_query_ms_p50"] = round(statistics.median(times["bm25"]), 3) if times["bm25"] else 0.0
    return result


async def _ingest(graph: Graph, sample: dict[str, Any]) -> dict[int, set[str]]:
    """Remember every turn (one transaction) and link neighbours; node id -> its dia_ids."""
    turns = turns_of(sample)
    items = [
        NewNode(
            f"{turn.get('speaker', '')}: {turn.get('text', '')}",
            meta={"speaker": turn.get("speaker"), "date": date, "dia_id": turn.get("dia_id"), "session": number},
        )
        for number, date, turn in turns
        if str(turn.get("text", "")).strip()
    ]
    results = await graph.add_many(items, cause="bench:recall")
    dia_of: dict[int, set[str]] = {}
    for (node_id, _), item in zip(results, items, strict=True):
        dia_of.setdefault(node_id, set()).add(str(item.meta["dia_id"]))
    sessions = [item.meta["session"] for item in items]
    links = [
        (results[i][0], results[i + 1][0], "related", ADJACENT_WEIGHT)
        for i in range(len(results) - 1)
        if sessions[i] == sessions[i + 1] and results[i][0] != results[i + 1][0]
    ]
    await graph.link_many(links, cause="bench:recall")
    return dia_of


async def _ask(
    recall: Recall,
    sample: dict[str, Any],
    dia_of: dict[int, set[str]],
    ks: list[int],
    scores: dict[str, list[tuple[str, list[float]]]],
    times: dict[str, list[float]],
) -> None:
    known = set().union(*dia_of.values()) if dia_of else set()
    for qa in sample.get("qa", []):
        category = str(qa.get("category", ""))
        evidence = {str(e) for e in qa.get("evidence") or []} & known
        question = str(qa.get("question", ""))
        if category == "5" or not evidence or not question.strip():
            continue
        started = time.perf_counter()
        try:
            found = [r.node.id for r in await recall.recall(question, k=ks[-1], record=False)]
        except UsageError:
            found = []
        times["loci"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        baseline = await recall.bm25(question, k=ks[-1])
        times["bm25"].append((time.perf_counter() - started) * 1000)
        for name, ids in (("loci", found), ("bm25", baseline)):
            scores[name].append((category, [_share(ids[:k], dia_of, evidence) for k in ks]))


def _share(ids: list[int], dia_of: dict[int, set[str]], evidence: set[str]) -> float:
    hit = set().union(*(dia_of.get(i, set()) for i in ids)) if ids else set()
    return len(hit & evidence) / len(evidence)


def _summary(rows: list[tuple[str, list[float]]], ks: list[int]) -> dict[str, Any]:
    def mean_at(selected: list[list[float]]) -> dict[str, float]:
        return {f"recall_at_{k}": round(statistics.fmean(r[i] for r in selected), 4) if selected else 0.0 for i, k in enumerate(ks)}

    out: dict[str, Any] = {"questions": len(rows), **mean_at([r for _, r in rows])}
    categories = sorted({c for c, _ in rows})
    out["by_category"] = {
        c: {"questions": sum(1 for cat, _ in rows if cat == c), **mean_at([r for cat, r in rows if cat == c])}
        for c in categories
    }
    return out
