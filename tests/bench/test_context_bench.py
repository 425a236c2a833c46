"""`loci bench context`: the real Agent, scripted, against the naive full-history loop."""

from __future__ import annotations

import argparse
from pathlib import Path

from loci.bench.context import context

KEYS = {
    "budget",
    "loci_max",
    "loci_p50",
    "loci_last",
    "naive_max",
    "naive_p50",
    "naive_last",
    "cumulative_ratio",
    "naive_exceeds_window_at_turn",
    "max_over_median_50_plus",
    "within_budget_all_turns",
    "turns",
    "seconds",
    "counter",
}


def options(**overrides: object) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    context.add_arguments(parser)
    args = parser.parse_args(["--turns", "120", "--window", "2048"])
    for key, value in overrides.items():
        setattr(args, key, value)
    return args


async def test_loci_prompt_stays_within_budget_while_naive_grows() -> None:
    report = await context.run(options())
    assert set(report) >= KEYS
    assert report["turns"] == 120
    assert report["within_budget_all_turns"] is True
    assert report["loci_max"] <= report["budget"]
    assert report["cumulative_ratio"] > 1
    assert report["naive_max"] > report["loci_max"]
    assert report["naive_exceeds_window_at_turn"] is not None
    assert report["note_calls"] > 0  # the window overflowed and was pruned with notes


def test_observation_sizes_are_seeded_and_reach_far_above_the_budget() -> None:
    sizes = context.observation_sizes(500, 16, 20_000, seed=3)
    assert sizes == context.observation_sizes(500, 16, 20_000, seed=3)
    assert min(sizes) >= 16 and max(sizes) <= 20_000
    assert sum(size > 10_000 for size in sizes) > 10


async def test_plot_writes_a_png(tmp_path: Path) -> None:
    target = tmp_path / "tokens.png"
    report = await context.run(options(turns=60, plot=str(target)))
    assert report["plot"] == str(target)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
