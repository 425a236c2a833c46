"""`loci bench context`: the prompt stays flat however long the run; naive history does not.

The real `Agent` runs N tool turns against a bench MCP server whose tool
returns observations of random size (seeded, log-uniform, from a few words
to many times the observation budget O). The model is the `ScriptedModel`
with a policy that keeps calling the tool, writes a working state of steady
size, writes short notes when the runtime asks for one (the rewrites of the
folds' extracts, run after the turns, as an idle worker would), and answers
on the last turn. So the numbers measure the runtime, not a model's whims.

In the same run the bench computes what a naive full-history loop would have
sent each turn (system, task, and every previous action and observation
verbatim), with the same counter. Tokens are whitespace words, the scripted
model's counter (`counter` in the JSON): a real tokenizer scales both curves
alike. Loci's per-turn numbers are counted from the messages the model
actually received, so nothing in the runtime's own bookkeeping is trusted.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from loci.runtime.loop.records import BUILT_IN, Limits, RunConfig, TurnTrace
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.prompt.build import RegionSizes
from loci.runtime.prompt.notes import rewrite_queued
from loci.runtime.prompt.regions import AnswerStyle
from loci.runtime.session.background import Background
from loci.runtime.session.session import open_session

__all__ = ["add_arguments", "observation_sizes", "run"]

TOOL = "bench_observe"
TASK = "Survey the plots one by one with bench_observe and keep a tally of what you find."
VOCABULARY = [
    "soil",
    "plot",
    "fee",
    "water",
    "tomato",
    "shed",
    "gate",
    "rule",
    "permit",
    "compost",
    "season",
    "row",
    "bed",
    "seed",
    "path",
    "fence",
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--turns", type=int, default=1000, help="tool turns to run (default 1000)")
    parser.add_argument("--window", type=int, default=8192, help="the model's context window in tokens (default 8192)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the observation sizes (default 7)")
    parser.add_argument("--min-observation", type=int, default=16, help="smallest observation in tokens (default 16)")
    parser.add_argument(
        "--max-factor", type=float, default=20.0, help="largest observation as a multiple of O (default 20)"
    )
    parser.add_argument("--plot", default=None, help="write a PNG of the per-turn tokens, Loci against naive")


def observation_sizes(turns: int, low: int, high: int, seed: int) -> list[int]:
    """Log-uniform sizes in [low, high]: most small, a steady share far above any budget."""
    rng = random.Random(seed)
    return [int(math.exp(rng.uniform(math.log(low), math.log(high)))) for _ in range(turns)]


def report_text(plot: int, sizes: list[int], seed: int) -> str:
    """The bench tool's result for `plot`: deterministic, `sizes[plot - 1]` words long."""
    rng = random.Random(seed * 1_000_003 + plot)
    size = sizes[(plot - 1) % len(sizes)]
    return f"plot {plot}: " + " ".join(rng.choices(VOCABULARY, k=max(1, size - 2)))


def bench_server(sizes: list[int], seed: int) -> MCPServer:
    server = MCPServer(name="bench")

    @server.tool(name=TOOL)
    def observe(plot: int) -> str:
        """Survey one plot and return the surveyor's report (its length varies a lot)."""
        return report_text(plot, sizes, seed)

    return server


@dataclass
class Policy:
    """The scripted model's behaviour: call the tool, plot after plot; write notes when asked; answer at the end."""

    count: Callable[[str], int]
    act_prompts: list[int] = field(default_factory=list)
    note_prompts: list[int] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)

    def __call__(self, request: Request) -> dict[str, Any] | str:
        size = sum(self.count(m["content"]) for m in request.messages)
        if request.purpose != "act" or request.schema is None:
            self.note_prompts.append(size)
            return "Plots surveyed so far: reports stored as obs ids; tally kept in the state; no constraint broken."
        self.act_prompts.append(size)
        plot = len(self.act_prompts)
        state = (
            "Goal: survey every plot and tally it. Constraint: never skip a plot. "
            f"Done up to plot {plot - 1}; next is plot {plot}."
        )
        schema = json.dumps(request.schema)
        reply: dict[str, Any]
        if TOOL in schema:
            reply = {"state": state, "tool": TOOL, "arguments": {"plot": plot}}
        else:
            reply = {"state": state, "answer": f"Surveyed {plot - 1} plots.", "evidence": []}
        self.replies.append(json.dumps(reply))
        return reply


async def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.monotonic()
    budgets = RegionSizes.for_window(args.window)
    sizes = observation_sizes(args.turns, args.min_observation, int(budgets.observation * args.max_factor), args.seed)
    model = ScriptedModel([], context_window=args.window, name="scripted:bench-context")
    policy = Policy(model.count_tokens)
    model.steps, model.repeat_last = [policy], True
    per_turn: list[int] = []
    regions: list[dict[str, int]] = []

    def on_turn(trace: TurnTrace) -> None:
        per_turn.append(policy.act_prompts[-1])
        regions.append(dict(trace.prompt_tokens))

    with tempfile.TemporaryDirectory(prefix="loci-bench-context-") as home:
        async with open_session(
            model,
            Path(home) / "loci.db",
            RunConfig(
                limits=Limits(max_turns=args.turns + 1), sizes=budgets, answer_style=AnswerStyle.JSON, tools=BUILT_IN
            ),
            on_turn=on_turn,
            background=Background.CALLER,  # the bench runs the note rewrites itself, after the turns
        ) as session:
            await session.host.add("bench", bench_server(sizes, args.seed))
            await session.agent.run(TASK)
            await rewrite_queued(model, session.contexts)  # the notes' rewrites cost prompts too, after the turns
    observations = [model.count_tokens(report_text(plot, sizes, args.seed)) for plot in range(1, len(per_turn))]
    naive = naive_prompts(model.calls[0].messages, policy.replies, observations, model.count_tokens)
    report = summarise(per_turn, naive, policy.note_prompts, budgets, args.window)
    report.update(
        turns=args.turns,
        seconds=round(time.monotonic() - started, 2),
        observation_max=max(sizes),
        observation_budget=budgets.observation,
    )
    report["max_over_median_50_plus_without_observation"] = _flatness(
        [sum(r.values()) - r.get("observation", 0) for r in regions]
    )
    if args.plot:
        draw(args.plot, per_turn, naive, budgets.total - budgets.reply, args.window)
        report["plot"] = args.plot
    return report


def naive_prompts(
    first: list[dict[str, str]], replies: list[str], observations: list[int], count: Callable[[str], int]
) -> list[int]:
    """Per turn, the prompt of a loop that keeps every action and observation verbatim."""
    base = sum(count(m["content"]) for m in first)
    prompts, history = [], 0
    for turn, reply in enumerate(replies):
        prompts.append(base + history)
        if turn < len(observations):
            history += count(reply) + count(f"Result of {TOOL}:") + observations[turn]
    return prompts


def summarise(loci: list[int], naive: list[int], notes: list[int], budgets: RegionSizes, window: int) -> dict[str, Any]:
    budget = budgets.total - budgets.reply
    over = next((turn for turn, tokens in enumerate(naive, 1) if tokens > window), None)
    return {
        "counter": "whitespace words (ScriptedModel.count_tokens)",
        "window": window,
        "budget": budget,
        "loci_max": max(loci),
        "loci_p50": int(statistics.median(loci)),
        "loci_last": loci[-1],
        "naive_max": max(naive),
        "naive_p50": int(statistics.median(naive)),
        "naive_last": naive[-1],
        "cumulative_ratio": round(sum(naive) / (sum(loci) + sum(notes)), 2),
        "cumulative_ratio_turn_prompts_only": round(sum(naive) / sum(loci), 2),
        "note_calls": len(notes),
        "note_prompt_tokens": sum(notes),
        "naive_exceeds_window_at_turn": over,
        "max_over_median_50_plus": _flatness(loci),
        "within_budget_all_turns": all(tokens <= budget for tokens in loci),
    }


def _flatness(values: list[int]) -> float:
    tail = values[49:] or values
    return round(max(tail) / statistics.median(tail), 3)


def draw(path: str | Path, loci: list[int], naive: list[int], budget: int, window: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    turns = range(1, len(loci) + 1)
    figure, axes = pyplot.subplots(figsize=(8, 4.5), dpi=120)
    axes.plot(turns, naive, label="naive full history", color="#c0392b")
    axes.plot(turns, loci, label="Loci (state + window + notes)", color="#2471a3")
    axes.axhline(budget, linestyle="--", color="#2471a3", linewidth=0.8, label=f"Loci prompt budget ({budget})")
    axes.axhline(window, linestyle=":", color="black", linewidth=0.8, label=f"model window ({window})")
    axes.set_yscale("log")
    axes.set_xlabel("turn")
    axes.set_ylabel("prompt tokens (whitespace words)")
    axes.set_title("Prompt size per turn: Loci against a naive full-history loop")
    axes.legend(loc="upper left", fontsize=8)
    figure.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    pyplot.close(figure)
