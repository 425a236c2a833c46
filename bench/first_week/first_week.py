"""`loci bench first-week`: a new user's first week, in one home, beside plain retrieval on the same model.

The path the issue's user took, on the bundled model:

1. memory: a conversation imported as JSONL messages (`loci memory import`;
   LoCoMo dev's first conversation with `--locomo`, BEAM dev's chats 1-5,
   a session each, with `--beam`), then a document loaded for another job (the curl
   copyright file, which names a John Malmberg), then `--questions`
   questions asked as `loci run Q` with no `--file`
   (runtime/session/sources.py). LoCoMo is scored by token F1 and BEAM by
   whether the stated value is in the answer (bench/qa/locomo.py,
   bench/qa/beam.py); `cites_turn` is the share of answers whose evidence
   names a turn of the conversation, `cites_document` of those that cite a
   document. Then the same home is asked more questions of the conversation
   until `--runs` runs have been made, and `memory search` (recall with no
   kind named, as `loci memory search` does) is measured as recall@5 of the
   questions' evidence turns before and after the runs (LoCoMo only: BEAM's
   questions name no turns). The first `--timed` questions are asked again
   with the memory tools on (`--tools memory`), and the median seconds of both
   are reported.
2. chat: a five-turn chat per file over four real files, with follow-ups
   ("Double it.", "What is half of that?"), bench/first_week/files.py;
3. digest: three questions over a concatenation of real copyright files of
   at least a megabyte, bench/first_week/files.py.

`rag` is the plain baseline a user would write instead, on the same loaded
model: BM25 over the conversation's turns or the file's lines, its top 8
and the question in one prompt (bench/qa/locomo.py `bm25_top`, `prompted`).
Each answer is printed on stderr as it ends.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from loci.bench.first_week.files import DATA, rag_answer, run_chats, run_digest
from loci.bench.qa.beam import beam_set
from loci.bench.qa.locomo import contains, f1
from loci.memory.errors import BackendError, ModelBehaviorError, UsageError
from loci.memory.graph.dates import spoken_date
from loci.memory.graph.recall import Recall
from loci.memory.imports.files import import_file
from loci.memory.imports.locomo import turns_of
from loci.runtime.cli.doctor import cpu_name
from loci.runtime.cli.run import tools_for
from loci.runtime.loop.records import Limits, RunConfig, RunResult
from loci.runtime.models.base import Model
from loci.runtime.models.specs import DEFAULT_SPEC, load_model
from loci.runtime.session.session import open_session
from loci.runtime.session.sources import Answered, ask

__all__ = ["add_arguments", "run"]

CATEGORIES = (1, 2, 4)
BEAM_CHATS = (1, 2, 3, 4, 5)
K = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", "-m", default=DEFAULT_SPEC, help=f"model spec (default {DEFAULT_SPEC})")
    parser.add_argument("--locomo", type=Path, default=None, help="LoCoMo JSON: import its first conversation")
    parser.add_argument("--beam", type=Path, default=None, help="BEAM chats folder: import its chats 1-5")
    parser.add_argument("--questions", type=int, default=20, help="questions asked of the conversation (default 20)")
    parser.add_argument("--runs", type=int, default=50, help="runs on the conversation before search is measured")
    parser.add_argument("--timed", type=int, default=5, help="questions also asked with --tools memory (default 5)")
    parser.add_argument("--max-turns", type=int, default=8, help="turns per run (as `loci run`)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parts", default="memory,chat,digest", help="what to measure, comma-separated")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    parts = {part.strip() for part in args.parts.split(",") if part.strip()}
    if unknown := parts - {"memory", "chat", "digest"}:
        raise UsageError(f"unknown parts {', '.join(sorted(unknown))}; choose from memory, chat, digest")
    plan = json.loads(DATA.read_text(encoding="utf-8"))
    model = await load_model(args.model)
    config = RunConfig(limits=Limits(max_turns=args.max_turns))
    report: dict[str, Any] = {"model": model.name, "cpu": cpu_name()}
    started = time.monotonic()
    try:
        if "memory" in parts and args.locomo is not None:
            report.update(await _memory(model, config, args, "locomo", *_locomo(args.locomo), plan["document"]))
        if "memory" in parts and args.beam is not None:
            report.update(await _memory(model, config, args, "beam", *_beam(args.beam), plan["document"]))
        if "chat" in parts:
            report.update(await run_chats(model, config, plan["chats"]))
        if "digest" in parts:
            report.update(await run_digest(model, plan["digest"]))
    finally:
        await model.aclose()
    report["wall_s"] = round(time.monotonic() - started, 1)
    return report


def _locomo(path: Path) -> tuple[list[dict[str, Any]], list[tuple[str, str, set[str]]]]:
    """The first conversation of a LoCoMo file as JSONL messages, and its questions (text, gold, evidence)."""
    sample = json.loads(path.read_text(encoding="utf-8"))[0]
    messages = []
    for turn in turns_of(sample):
        text = turn.text + (f" [shares an image: {turn.image}]" if turn.image else "")
        when = turn.said.isoformat() if turn.said else None
        message = {"id": turn.ref, "speaker": turn.speaker, "content": text, "session": turn.session}
        messages.append(message | ({"timestamp": when} if when else {}))
    questions = [
        (str(q["question"]), str(q["answer"]), set(q.get("evidence") or []))
        for q in sample["qa"]
        if q.get("category") in CATEGORIES and "answer" in q
    ]
    return messages, questions


def _beam(root: Path) -> tuple[list[dict[str, Any]], list[tuple[str, str, set[str]]]]:
    """BEAM dev's chats 1-5 as JSONL messages, a session each, and their one-value questions (no evidence
    turns), as `bench qa --beam` reads them (bench/qa/beam.py `beam_set`, which writes a chat one message
    a line); one chat holds 3 to 8 such questions, the five 21."""
    messages: list[dict[str, Any]] = []
    questions: list[tuple[str, str, set[str]]] = []
    with tempfile.TemporaryDirectory(prefix="loci-first-week-beam-") as out:
        for chat in BEAM_CHATS:
            asked = beam_set(root, [chat], Path(out))
            for number, line in enumerate(asked[0].lines if asked else (), 1):
                role, _, text = line.partition(": ")
                messages.append({"id": f"{chat}:{number}", "role": role, "content": text, "session": str(chat)})
            questions += [(q.question, q.answer, set()) for q in asked]
    return messages, questions


async def _memory(
    model: Model,
    config: RunConfig,
    args: argparse.Namespace,
    name: str,
    messages: list[dict[str, Any]],
    questions: list[tuple[str, str, set[str]]],
    document: str,
) -> dict[str, Any]:
    """Import, load the document, ask; rag beside; memory search before and after the runs."""
    random.Random(args.seed).shuffle(questions)
    asked = questions[: args.questions]
    lines = tuple(_line(m) for m in messages)
    scores: dict[str, list[float]] = {"loci": [], "rag": []}
    cites_turn = cites_document = 0
    seconds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="loci-first-week-") as home, sqlite3.connect(":memory:") as stems:
        db = Path(home) / "loci.db"
        conversation = Path(home) / f"{name}.jsonl"
        conversation.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
        async with open_session(model, db, config, files=[document]) as session:
            await import_file(session.graph, conversation, "jsonl", cause=f"import {conversation.name}")
            node_of = await _turn_nodes(session)
            before = await _search_recall(session, questions, node_of)
            for number, (question, gold, _) in enumerate(asked, 1):
                begun = time.monotonic()
                answered = await _ask(session, question)
                seconds.append(time.monotonic() - begun)
                rag = await rag_answer(model, lines, question)
                for arm, answer in (("loci", answered.result.answer), ("rag", rag)):
                    scores[arm].append(_score(name, answer, gold, stems))
                memory = bool(answered.source and answered.source.name == "memory" and any(answered.memories))
                cites_turn += memory
                cites_document += any(c.id.startswith("doc:") for c in answered.result.evidence) and not memory
                print(
                    f"first-week {name} {number}/{len(asked)}:"
                    f" loci={scores['loci'][-1]:.2f} rag={scores['rag'][-1]:.2f}"
                    f" from={answered.source.name if answered.source else '-'} gold={gold[:30]!r}"
                    f" loci={answered.result.answer[:80]!r} rag={rag[:60]!r}",
                    file=sys.stderr,
                    flush=True,
                )
            for question, _, _ in questions[len(asked) : args.runs]:
                await _ask(session, question)
            after = await _search_recall(session, questions, node_of)
        timed = await _timed(model, db, config, asked[: args.timed])
    return {
        f"{name}_questions": len(asked),
        f"{name}_loci": round(statistics.fmean(scores["loci"]), 3) if asked else 0.0,
        f"{name}_rag": round(statistics.fmean(scores["rag"]), 3) if asked else 0.0,
        f"{name}_cites_turn": round(cites_turn / max(1, len(asked)), 3),
        f"{name}_cites_document": round(cites_document / max(1, len(asked)), 3),
        f"{name}_run_s_median": round(statistics.median(seconds), 2) if seconds else 0.0,
        f"{name}_runs": min(args.runs, len(questions)),
        f"{name}_search_r5_before": before,
        f"{name}_search_r5_after": after,
        **{f"{name}_{key}": value for key, value in timed.items()},
    }


def _line(message: dict[str, Any]) -> str:
    """A message as a line of the rag arm's transcript, as bench/qa/locomo.py writes a turn."""
    who = message.get("speaker") or message.get("role")
    when = message.get("timestamp")
    said = f"[{spoken_date(date.fromisoformat(when[:10]))}] " if when else ""
    return f"{said}{who}: {' '.join(str(message['content']).split())}"


def _score(name: str, answer: str, gold: str, stems: sqlite3.Connection) -> float:
    return f1(answer, gold, stems) if name == "locomo" else float(contains(answer, gold))


async def _ask(session: Any, question: str) -> Answered:
    """`loci run Q` with no file; a model that never gave a valid action, or a backend that failed, answers
    nothing (a wrong answer, not the end of the benchmark)."""
    try:
        return await ask(session, question, [])
    except (ModelBehaviorError, BackendError) as exc:
        print(f"first-week: {question!r} failed: {exc}", file=sys.stderr)
        return Answered(0, RunResult(answer="", status="failed", reason=str(exc)), None, [])


async def _turn_nodes(session: Any) -> dict[str, int]:
    """The node of each imported turn, by its ref (the message's id: LoCoMo's dia_id)."""

    def read(db: Any) -> dict[str, int]:
        sql = "SELECT id, json_extract(meta, '$.ref') FROM memory_nodes WHERE kind = 'semantic' AND deleted IS NULL"
        return {str(ref): node for node, ref in db.conn.execute(sql) if ref}

    return await session.store.read(read)


async def _search_recall(session: Any, questions: list[tuple[str, str, set[str]]], node_of: dict[str, int]) -> float:
    """Recall@5 of the questions' evidence turns by `memory search` (no kind named, no use recorded)."""
    recall, shares = Recall(session.graph), []
    for question, _, evidence in questions:
        wanted = {node_of[ref] for ref in evidence if ref in node_of}
        if not wanted:
            continue
        found = {r.node.id for r in await recall.recall(question, k=K, record=False)}
        shares.append(len(found & wanted) / len(wanted))
    return round(statistics.fmean(shares), 3) if shares else 0.0


async def _timed(model: Model, db: Path, config: RunConfig, asked: list[tuple[str, str, set[str]]]) -> dict[str, float]:
    """Median seconds of a plain run and of one with the memory tools on, on the same questions and home."""
    times: dict[str, list[float]] = {"plain_s": [], "memory_tools_s": []}
    tools = RunConfig(limits=config.limits, tools=tools_for(("memory",), files=False))  # `loci run Q --tools memory`
    for key, chosen in (("plain_s", config), ("memory_tools_s", tools)):
        async with open_session(model, db, chosen) as session:
            for question, _, _ in asked:
                begun = time.monotonic()
                await _ask(session, question)
                times[key].append(time.monotonic() - begun)
    return {key: round(statistics.median(values), 2) if values else 0.0 for key, values in times.items()}
