"""`loci bench sessions`, scaled down: the cap refuses what is past it, the baseline admits all, idle ones expire."""

from __future__ import annotations

import json
import subprocess
import sys


def test_bench_sessions_reports_the_cap_the_baseline_and_expiry() -> None:
    command = [sys.executable, "-m", "loci.runtime.cli.main", "bench", "sessions", "--json", "--abandoned", "80"]
    done = subprocess.run([*command, "--idle", "1"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    cap = result["max_sessions"]
    assert result["capped_admitted"] == cap - 1 and result["capped_refused_503"] == 80 - (cap - 1)  # one warm-up
    assert result["uncapped_admitted"] == 80 and result["uncapped_refused_503"] == 0
    assert result["expiring_expired_404"] == 80
    assert all(result[f"{name}_rss_after_mb"] > 0 for name in ("capped", "uncapped", "expiring"))
