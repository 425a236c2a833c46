"""`loci bench hooks` at a tiny size: its keys, and that the hook process answered."""

from __future__ import annotations

import argparse

from loci.bench import load


async def test_hooks_bench_times_the_hook_process_and_its_baselines() -> None:
    module = load("hooks")
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    result = await module.run(parser.parse_args(["--nodes", "300", "--runs", "3"]))
    assert result["nodes"] == 300 and result["runs"] == 3
    assert result["recall_p95_ms"] >= result["recall_p50_ms"] > 0
    assert result["recall_cpu_p50_ms"] > 0 and result["python_start_p50_ms"] > 0
    assert result["answered"] > 0
