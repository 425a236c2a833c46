"""`loci bench latency`: turn time on a real local model, Loci against naive full history.

Loci's `Agent` runs N turns on the model (the bundled GGUF by default) with
a bench tool that returns a few hundred tokens of varying text. The model
is kept calling that tool with `tool_choice` (the turn's schema narrowed to
it), and the page it asks for is set to the turn's (`TurnPages`: the model
writes its whole reply, whose cost is what is measured, then the page number
is replaced; a small model asks for page 1 again and again, and the runtime
does not dispatch a repeated call). The prompt is Loci's own; only the
action is fixed, since this is a benchmark of prompt growth, not of a
model's judgement. Per turn it records
the wall time (from one turn's end to the next, so notes written while
pruning count), and what llama.cpp evaluated and reused from its KV cache.

Notes are written as the runtime writes them by default (`NoteMode.BACKGROUND`):
a fold stores an extract at once and queues the model's rewrite. After the
run, the bench drains those rewrites on the same model, as an idle `loci
chat` would, and reports their time apart from the turns (`note_rewrites`).
`median_turn_s` and `p95_turn_s` are over all of Loci's turns.

The naive loop is measured in the same process on the same model: system,
task and every previous reply and observation verbatim, sent with the same
schema and reply budget, until the next prompt would not fit the model's
window (`naive_hit_window_at`). Replies are kept short (`--max-tokens`) so
that 60 turns take minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from loci.runtime.loop.action import action_schema
from loci.runtime.loop.records import BUILT_IN, Limits, RunConfig, TurnTrace
from loci.runtime.models.base import Model, Reply, Request
from loci.runtime.models.specs import DEFAULT_SPEC, load_model
from loci.runtime.models.wrapper import ModelWrapper
from loci.runtime.prompt.build import TEMPLATE_OVERHEAD, RegionSizes
from loci.runtime.prompt.notes import rewrite_queued
from loci.runtime.prompt.regions import AnswerStyle, system_text
from loci.runtime.session.background import Background
from loci.runtime.session.session import open_session

__all__ = ["TurnPages", "add_arguments", "page_text", "run"]

TOOL = "bench_page"
TASK = (
    "Read the garden log page by page with bench_page (page 1, then 2, and so on) "
    "and keep the rules you find in your state."
)
WORDS = [
    "the",
    "plot",
    "fee",
    "is",
    "due",
    "in",
    "march;",
    "water",
    "only",
    "before",
    "nine;",
    "compost",
    "bins",
    "sit",
    "by",
    "the",
    "north",
    "gate;",
    "tomatoes",
    "need",
    "stakes;",
    "the",
    "shed",
    "key",
    "hangs",
    "in",
    "the",
    "office;",
    "no",
    "pesticides",
    "near",
    "the",
    "pond;",
    "paths",
    "stay",
    "clear;",
    "seeds",
    "are",
    "shared",
    "on",
    "saturdays;",
    "rows",
    "run",
    "east",
    "to",
    "west;",
    "the",
    "committee",
    "meets",
    "monthly;",
    "fences",
    "are",
    "under",
    "one",
    "metre",
]
SPAN = 10  # medians over the first SPAN turns and the last SPAN (1-10 and 51-60 of 60)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", "-m", default=DEFAULT_SPEC, help=f"model spec (default {DEFAULT_SPEC})")
    parser.add_argument("--context-window", type=int, default=None, help="the model's context window in tokens")
    parser.add_argument("--turns", type=int, default=60, help="tool turns to run (default 60)")
    parser.add_argument("--max-tokens", type=int, default=96, help="reply budget per turn (default 96)")
    parser.add_argument("--page-words", type=int, default=180, help="mean words per tool result (default 180)")
    parser.add_argument("--seed", type=int, default=11)


class TurnPages(ModelWrapper):
    """The model, with the page of each `bench_page` call it writes set to the next page."""

    def __init__(self, model: Model) -> None:
        super().__init__(model)
        self.page = 0

    async def generate(self, request: Request) -> Reply:
        reply = await self.inner.generate(request)
        try:
            action = json.loads(reply.text, strict=False)
        except ValueError:
            return reply  # the runtime sends an invalid reply back, as it would the model's
        if isinstance(action, dict) and action.get("tool") == TOOL:
            self.page += 1
            action["arguments"] = {"page": self.page}
            reply.text = json.dumps(action)
        return reply


def page_text(page: int, mean_words: int, seed: int) -> str:
    """The bench tool's result: deterministic, varying text of about `mean_words` words."""
    rng = random.Random(seed * 7919 + page)
    size = rng.randint(mean_words // 2, mean_words * 3 // 2)
    return f"Garden log, page {page}: " + " ".join(rng.choice(WORDS) for _ in range(size))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.monotonic()
    model = await load_model(args.model, context_window=args.context_window)
    try:
        loci, system, schema = await _loci(TurnPages(model), args)
        naive, hit = await _naive(model, system, schema, args)
    finally:
        await model.aclose()
    report: dict[str, Any] = {
        "model": model.name,
        "context_window": model.context_window,
        "turns": args.turns,
        "max_tokens": args.max_tokens,
    }
    early, late = slice(0, SPAN), slice(max(0, args.turns - SPAN), args.turns)
    report["early_turns"], report["late_turns"] = f"1-{min(SPAN, args.turns)}", f"{late.start + 1}-{args.turns}"
    turns = loci["seconds"]
    report["median_turn_s"] = round(statistics.median(turns), 3) if turns else None
    report["p95_turn_s"] = _p95(turns)
    report["p95_over_median"] = round(report["p95_turn_s"] / report["median_turn_s"], 2) if turns else None
    rewrites = loci.pop("note_rewrites")
    report["note_rewrites"] = {
        "count": len(rewrites),
        "median_s": round(statistics.median(rewrites), 3) if rewrites else None,
        "note": "run after the turns, as an idle `loci chat` worker runs them; no turn waited for one",
    }
    report.update(_medians("loci", loci, early, late))
    report.update(_medians("naive", naive, early, late))
    report["loci_late_over_early"] = _ratio(report, "loci", "seconds")
    report["loci_late_over_early_evaluated"] = _ratio(report, "loci", "evaluated")
    report["naive_late_over_early"] = _ratio(report, "naive", "seconds")
    report["naive_hit_window_at"] = hit
    report["naive_last_over_first_10"] = (
        round(naive["seconds"][-1] / report["naive_early_seconds"], 2) if naive["seconds"] else None
    )
    report["loci"], report["naive"] = loci, naive
    report["seconds"] = round(time.monotonic() - started, 1)
    return report


async def _loci(model: Model, args: argparse.Namespace) -> tuple[dict[str, list[Any]], str, dict[str, Any]]:
    """Loci's rows, and the system prompt and tool schema it used (the naive loop sends the same)."""
    sizes = RegionSizes.for_window(model.context_window, reply=args.max_tokens)
    rows: dict[str, list[Any]] = {
        "seconds": [],
        "model_seconds": [],
        "evaluated": [],
        "reused": [],
        "prompt": [],
        "retries": [],
    }
    mark = [time.monotonic()]

    def on_turn(trace: TurnTrace) -> None:
        now = time.monotonic()
        rows["seconds"].append(round(now - mark[0], 3))
        rows["model_seconds"].append(round(trace.seconds, 3))  # the act call(s) alone, without notes or tools
        rows["evaluated"].append(trace.evaluated_tokens)
        rows["reused"].append(trace.reused_tokens)
        rows["prompt"].append(trace.evaluated_tokens + trace.reused_tokens)
        rows["retries"].append(trace.retries)
        mark[0] = now

    server = MCPServer(name="bench")

    @server.tool(name=TOOL)
    def page(page: int) -> str:
        """Read one page of the garden log."""
        return page_text(page, args.page_words, args.seed)

    limits = Limits(max_turns=args.turns + 1, max_retries=3)
    with tempfile.TemporaryDirectory(prefix="loci-bench-latency-") as home:
        async with open_session(
            model,
            Path(home) / "loci.db",
            RunConfig(limits=limits, sizes=sizes, answer_style=AnswerStyle.JSON, tools=BUILT_IN),
            on_turn=on_turn,
            background=Background.CALLER,  # the bench runs the note rewrites itself, after the turns
        ) as session:
            await session.host.add("bench", server)
            spec = next(tool for tool in session.host.tools if tool.name == TOOL)
            mark[0] = time.monotonic()
            await session.agent.run(TASK, tool_choice=[TOOL] * args.turns)
            system = system_text(session.host.tools)
            rows["note_rewrites"] = await rewrite_queued(session.agent.model, session.contexts)
    rows.update({key: values[: args.turns] for key, values in rows.items() if key != "note_rewrites"})
    return rows, system, action_schema([spec], allow_answer=False)


async def _naive(
    model: Model, system: str, schema: dict[str, Any], args: argparse.Namespace
) -> tuple[dict[str, list[Any]], int | None]:
    """The full-history loop: every reply and observation verbatim, until the window is full."""
    history = f"Task: {TASK}"
    rows: dict[str, list[Any]] = {"seconds": [], "evaluated": [], "reused": [], "prompt": []}
    for turn in range(1, args.turns + 1):
        user = f"{history}\n\nReply with one JSON object: a tool call."
        if (
            model.count_tokens(system) + model.count_tokens(user) + TEMPLATE_OVERHEAD + args.max_tokens
            > model.context_window
        ):
            return rows, turn
        began = time.monotonic()
        reply = await model.generate(
            Request(
                [{"role": "system", "content": system}, {"role": "user", "content": user}],
                schema=schema,
                max_tokens=args.max_tokens,
            )
        )
        rows["seconds"].append(round(time.monotonic() - began, 3))
        rows["evaluated"].append(reply.evaluated_tokens)
        rows["reused"].append(reply.reused_tokens)
        rows["prompt"].append(reply.prompt_tokens)
        page = page_text(turn, args.page_words, args.seed)  # as Loci's run reads them: page N at turn N
        history += f"\n\nYou: {reply.text}\nResult of {TOOL}:\n{page}"
    return rows, None


def _medians(name: str, rows: dict[str, list[Any]], early: slice, late: slice) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for span, part in (("early", early), ("late", late)):
        for key in ("seconds", "evaluated", "reused"):
            values = rows[key][part]
            if span == "late" and len(rows[key]) < part.stop:  # the loop stopped (at the window) before these turns
                values = []
            out[f"{name}_{span}_{key}"] = round(statistics.median(values), 3) if values else None
    return out


def _ratio(report: dict[str, Any], name: str, key: str) -> float | None:
    early, late = report[f"{name}_early_{key}"], report[f"{name}_late_{key}"]
    return round(late / early, 2) if early and late else None


def _p95(values: list[float]) -> float | None:
    """The 95th percentile, by the nearest rank."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * 95 // 100) - 1)]
