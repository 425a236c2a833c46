"""`loci bench live`, scaled down on SQLite: every write is heard on the other server, and the figures are there."""

from __future__ import annotations

import json
import subprocess
import sys


def test_bench_live_hears_every_write_and_reports_it_beside_the_write_call() -> None:
    command = [sys.executable, "-m", "loci.runtime.cli.main", "bench", "live", "--json", "--writes", "3"]
    done = subprocess.run([*command, "--engines", "sqlite"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    heard, call = result["sqlite"]["write_to_event_ms"], result["sqlite"]["write_call_ms"]
    assert heard["max"] >= heard["p95"] >= heard["p90"] >= heard["p50"] > 0 and call["p50"] > 0
    assert result["goal_p50_ms"] == 200 and "postgresql" not in result
