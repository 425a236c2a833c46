"""The context-store and navigate benchmarks run end to end at tiny sizes and report what they promise."""

from __future__ import annotations

import argparse
from typing import Any

from loci.bench.context import navigate
from loci.bench.context import store as context_store


def parse(module: Any, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    return parser.parse_args(argv)


async def test_context_store_bench_reports_both_sizes() -> None:
    args = parse(context_store, ["--tokens", "20000", "--compare-tokens", "5000", "--queries", "6", "--reads", "4"])
    report = await context_store.run(args)
    keys = {
        "load_tokens_per_s",
        "search_p50_ms",
        "search_p95_ms",
        "read_p50_ms",
        "db_bytes",
        "peak_rss_mb",
        "counter",
        "tokens",
    }
    assert keys <= report.keys()
    assert keys <= report["compare"].keys()
    assert report["tokens"] > report["compare"]["tokens"] > 0
    goals = context_store.GOALS
    load_at_10m = report["load_seconds"] * 10_000_000 / report["tokens"]
    assert report["meets_goals"] == {
        "load_seconds_at_10m": load_at_10m <= goals["load_seconds_at_10m"],
        "search_p50_ms": report["search_p50_ms"] <= goals["search_p50_ms"],
        "peak_rss_mb": report["peak_rss_mb"] <= goals["peak_rss_mb"],
    }
    assert report["rss_ratio"] == round(report["peak_rss_mb"] / report["compare"]["peak_rss_mb"], 2)
    assert report["db_bytes"] > 0 and report["compare"]["db_bytes"] > 0
    assert report["counter"].startswith(("tiktoken:", "estimate:"))


async def test_navigate_bench_finds_planted_facts_through_the_tools() -> None:
    report = await navigate.run(parse(navigate, ["--tokens", "40000", "--questions", "3"]))
    assert report["questions"] == 3 and report["found"] == 3
    assert report["tool_calls"] == sum(q["tool_calls"] for q in report["per_question"]) >= 6
    for question in report["per_question"]:
        assert question["found"] and question["answer"] == question["expected"]
        assert question["tool_calls"] >= 2 and question["tokens_returned"] > 0
    agent = report["agent"]
    assert agent["found"] == 3 and agent["tool_calls_per_question"] >= 2
    assert 0 < agent["max_prompt_tokens"] <= agent["prompt_tokens_per_question"]
