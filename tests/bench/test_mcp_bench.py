"""`loci bench mcp`, scaled down: every key is there and nothing fails under concurrency."""

from __future__ import annotations

import json
import subprocess
import sys

from loci.bench.servers.mcp import GOALS


def test_bench_mcp_reports_each_path_and_the_concurrent_run() -> None:
    command = [
        sys.executable,
        "-m",
        "loci.runtime.cli.main",
        "bench",
        "mcp",
        "--json",
        "--nodes",
        "300",
        "--calls",
        "10",
    ]
    command += ["--clients", "2", "--concurrent-calls", "5", "--no-baseline"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["calls"] == 10 and all(result[f"{path}_p50_ms"] > 0 for path in ("inprocess", "stdio", "http"))
    for path in ("stdio", "http"):  # what the transport adds is the path's p50 less the in-process one
        overhead = round(result[f"{path}_p50_ms"] - result["inprocess_p50_ms"], 3)
        assert result[f"{path}_overhead_p50_ms"] == overhead
    assert result["goals"] == GOALS
    assert result["met"] == {
        "stdio_p50_ms": result["stdio_p50_ms"] <= 3.0,
        "stdio_overhead_p50_ms": result["stdio_overhead_p50_ms"] <= 1.0,
        "http_p50_ms": result["http_p50_ms"] <= 5.0,
        "concurrent_calls_per_s": result["concurrent_calls_per_s"] >= 400,
        "concurrent_errors": True,
    }
    assert result["concurrent_calls"] == 10 and result["concurrent_errors"] == 0
    assert result["concurrent_calls_per_s"] > 0 and result["nodes"] == 300
    assert all(result[f"{path}_client_cpu_ms_per_call"] > 0 for path in ("stdio", "http"))  # the clients' share
