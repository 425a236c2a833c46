"""`loci bench startup`: the keys it reports, from real processes."""

from __future__ import annotations

import argparse

from loci.bench.servers.startup import run


async def test_startup_bench_reports_medians_of_real_processes() -> None:
    result = await run(argparse.Namespace(runs=1))
    for key in ("version_s", "memory_search_s", "python_s", "version_cpu_s", "memory_search_cpu_s"):
        assert result[key] > 0
    assert 0 < result["serve_initialize_s"] <= result["serve_tools_list_s"]
    assert 0 < result["serve_initialize_loaded_s"] <= result["serve_tools_list_loaded_s"]
    assert result["runs"] == 1
