"""`loci bench qa`: right answers on a model, Loci against the same model prompted directly.

Two generated question sets (`bench.qa.data`): short documents that fit a
small model's window, and long real text far larger than it with one
planted fact per question. For each question, in the same run, on the same
loaded model:

- Loci: a fresh home, the document loaded as a file, `agent.run(question)`
  with the default configuration (the run picks whole-or-navigate and the
  catalogue itself); timed from opening the session to the answer;
- direct: the document cut to the model's window (its head) and the
  question in one chat message, one free-text call.

An answer is right when the expected span appears in it (case-insensitive).
`--data FILE` adds real conversations in the LoCoMo format (`bench.qa.locomo`:
Loci, the conversation cut to the window, and plain BM25 retrieval, scored by
LoCoMo's token F1); `--short 0 --long 0` runs that set alone. `--files` runs
the real-file set (`bench.qa.files`: facts of files that ship with Python
and Debian, each asked in several phrasings, Loci against plain BM25 over the
file's lines), alone unless `--short` or `--long` is given, `--files-facts N`
a subset of it that keeps every kind of file; `--beam DIR` the BEAM set
(`bench.qa.beam`: one stated value asked back from a long chat, on the same
arms). `--arms` picks the arms of these sets: `loci,rag` on files and BEAM
unless it names `direct` (the file's head, the slowest arm), all three on
LoCoMo.
`--compare` also runs the short set with answers inside the JSON action
(`AnswerStyle.JSON`) and with the whole catalogue (every built-in tool set
named), the two choices the default makes, and reports the system prompt's
size under each catalogue.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from loci.bench.qa.beam import beam_set
from loci.bench.qa.data import Question, long_set, short_set
from loci.bench.qa.files import ARMS, DEFAULT_ARMS, run_files
from loci.bench.qa.files_data import FILES, file_set, spread
from loci.bench.qa.locomo import locomo_set, run_locomo
from loci.memory.errors import ModelBehaviorError, UsageError
from loci.runtime.cli.doctor import cpu_name
from loci.runtime.loop.records import BUILT_IN, Limits, RunConfig
from loci.runtime.models.base import Model, Request
from loci.runtime.models.specs import DEFAULT_SPEC, load_model
from loci.runtime.prompt.build import TEMPLATE_OVERHEAD, fit
from loci.runtime.prompt.regions import AnswerStyle
from loci.runtime.session.session import open_session

__all__ = ["add_arguments", "direct_answer", "loci_answer", "run"]

DIRECT_TOKENS = 64


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", "-m", default=DEFAULT_SPEC, help=f"model spec (default {DEFAULT_SPEC})")
    parser.add_argument("--context-window", type=int, default=None, help="the model's context window in tokens")
    parser.add_argument("--short", type=int, default=None, help="short questions (default 10; 0 with --files)")
    parser.add_argument("--long", type=int, default=None, help="long questions (default 5; 0 with --files)")
    parser.add_argument("--long-words", type=int, default=24_000, help="words of real text per long document")
    parser.add_argument("--max-turns", type=int, default=6, help="Loci's turn limit per question (default 6)")
    parser.add_argument("--compare", action="store_true", help="also measure JSON answers and the whole catalogue")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=None, help="a LoCoMo-format JSON file: adds the conversation set")
    parser.add_argument("--locomo", type=int, default=40, help="questions of the conversation set (default 40)")
    parser.add_argument(
        "--files",
        nargs="?",
        const=FILES,
        default=None,
        type=Path,
        help="the real-file question set (default bench/data/qa_files.json)",
    )
    parser.add_argument("--beam", type=Path, default=None, help="BEAM's chats folder (e.g. .cache/beam/chats/100K)")
    parser.add_argument("--beam-chats", default="1,2,3,4,5", help="the BEAM chats to ask, comma-separated")
    parser.add_argument(
        "--arms",
        default=None,
        help=f"the arms of the file, BEAM and LoCoMo sets, comma-separated (default {','.join(DEFAULT_ARMS)} on "
        f"files and BEAM, {','.join(ARMS)} on LoCoMo)",
    )
    parser.add_argument("--files-facts", type=int, default=None, help="ask only this many facts, spread over kinds")
    parser.add_argument("--files-max-turns", type=int, default=8, help="Loci's turn limit on files (as `loci run`)")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    model = await load_model(args.model, context_window=args.context_window)
    limits = Limits(max_turns=args.max_turns)
    try:
        report: dict[str, Any] = {"model": model.name, "cpu": cpu_name()}
        if args.data is not None:
            locomo_set(args.data, 1, args.seed)  # a bad file fails before the slow sets run
        if args.files is not None:
            file_set(args.files)  # the same for a bad fact file
            if args.files_facts is not None and args.files_facts < 1:
                raise UsageError(f"--files-facts must be a positive number of facts (got {args.files_facts})")
        alone = args.files is not None or args.beam is not None
        short = args.short if args.short is not None else 0 if alone else 10
        long = args.long if args.long is not None else 0 if alone else 5
        sets = {"long": long_set(long, args.long_words, args.seed), "short": short_set(short, args.seed)}
        for name, questions in sets.items():
            report.update(
                _summary(name, "loci", [await loci_answer(model, q, RunConfig(limits=limits)) for q in questions])
            )
            report.update(_summary(name, "direct", [await direct_answer(model, q) for q in questions]))
        if args.files is not None:
            with tempfile.TemporaryDirectory(prefix="loci-files-set-") as out:
                files, report["files_skipped"] = file_set(args.files, Path(out))
                if args.files_facts is not None:
                    files = spread(files, args.files_facts)
                config = RunConfig(limits=Limits(max_turns=args.files_max_turns))
                report.update(await run_files(model, files, config, _arms(args, DEFAULT_ARMS)))
        if args.beam is not None:
            with tempfile.TemporaryDirectory(prefix="loci-beam-") as out:
                chats = [int(n) for n in args.beam_chats.split(",") if n.strip().isdigit()]
                questions = beam_set(args.beam, chats, Path(out))
                config = RunConfig(limits=Limits(max_turns=args.files_max_turns))
                report.update(await run_files(model, questions, config, _arms(args, DEFAULT_ARMS), name="beam"))
        if args.data is not None:
            questions = locomo_set(args.data, args.locomo, args.seed)
            report.update(await run_locomo(model, questions, RunConfig(limits=limits), _arms(args, ARMS)))
        if args.compare:
            variants = {
                "loci_json": RunConfig(limits=limits, answer_style=AnswerStyle.JSON),
                "loci_full_catalogue": RunConfig(limits=limits, tools=BUILT_IN),
            }
            for variant, config in variants.items():
                report.update(
                    _summary("short", variant, [await loci_answer(model, q, config, variant) for q in sets["short"]])
                )
            report["system_tokens"] = await _system_tokens(model, sets["short"][0], limits)
    finally:
        await model.aclose()
    return report


async def direct_answer(model: Model, q: Question) -> tuple[bool, float, str]:
    """The baseline: the document's head, cut to the window, and the question in one message."""
    started = time.monotonic()
    room = model.context_window - DIRECT_TOKENS - TEMPLATE_OVERHEAD - model.count_tokens(q.question) - 8
    document, _ = fit(q.document, room, model.count_tokens)
    reply = await model.generate(
        Request(
            [{"role": "user", "content": f"{document}\n\n{q.question}"}], max_tokens=DIRECT_TOKENS, purpose="direct"
        )
    )
    return _scored("direct", q, reply.text, time.monotonic() - started)


async def loci_answer(model: Model, q: Question, config: RunConfig, who: str = "loci") -> tuple[bool, float, str]:
    """Loci on a fresh home with the document as a file; timed from opening the session."""
    with tempfile.TemporaryDirectory(prefix="loci-qa-") as home:
        path = Path(home) / f"{q.name}.txt"
        path.write_text(q.document, encoding="utf-8")
        started = time.monotonic()
        try:
            async with open_session(model, Path(home) / "loci.db", config, files=[path]) as session:
                answer = (await session.agent.run(q.question)).answer
        except ModelBehaviorError as exc:  # the model never gave a valid action: a wrong answer, not a crash
            answer = f"(failed: {exc})"
        return _scored(who, q, answer, time.monotonic() - started)


async def _system_tokens(model: Model, q: Question, limits: Limits) -> dict[str, int]:
    """The system region's tokens on the first turn of one short question, per catalogue."""
    sizes = {}
    for name, tools in (("default", None), ("full_catalogue", BUILT_IN)):
        with tempfile.TemporaryDirectory(prefix="loci-qa-") as home:
            path = Path(home) / "doc.txt"
            path.write_text(q.document, encoding="utf-8")
            async with open_session(
                model, Path(home) / "loci.db", RunConfig(limits=limits, tools=tools), files=[path]
            ) as session:
                result = await session.agent.run(q.question)
        sizes[name] = result.turns[0].prompt_tokens.get("system", 0) if result.turns else 0
    return sizes


def _arms(args: argparse.Namespace, default: tuple[str, ...]) -> list[str]:
    if args.arms is None:
        return list(default)
    return [arm.strip() for arm in args.arms.split(",") if arm.strip()]


def _scored(who: str, q: Question, answer: str, seconds: float) -> tuple[bool, float, str]:
    """Right when the expected span is in the answer; each question is reported on stderr as it ends."""
    right = q.expected.lower() in answer.lower()
    print(
        f"qa: {who} {q.name}: {'right' if right else 'wrong'} {seconds:.1f}s: {answer[:100]!r}",
        file=sys.stderr,
        flush=True,
    )
    return right, seconds, answer


def _summary(name: str, who: str, outcomes: list[tuple[bool, float, str]]) -> dict[str, Any]:
    if not outcomes:
        return {}
    right = [ok for ok, _, _ in outcomes]
    return {
        f"{name}_{who}_acc": round(sum(right) / len(right), 3),
        f"{name}_{who}_s_median": round(statistics.median(s for _, s, _ in outcomes), 2),
        f"{name}_{who}_answers": [a[:80] for _, _, a in outcomes],
    }
