"""`loci models` says which llama.cpp mode is in use and why: the override, a cached verdict, or a probe now."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loci.runtime.models.llama.verdict import ENV, machine_key, verdict_path


def models(home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if key != ENV}
    environ.update(LOCI_HOME=str(home), **env)
    command = [sys.executable, "-m", "loci.runtime.cli.main", "models"]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=environ)


def test_models_shows_the_override(tmp_path: Path) -> None:
    done = models(tmp_path, **{ENV: "0"})
    assert done.returncode == 0, done.stderr
    assert f"llama.cpp: llama.cpp extra buffer types off (forced by {ENV}=0)" in done.stdout
    assert not verdict_path(tmp_path).exists()


def test_models_shows_a_cached_verdict_and_its_date(tmp_path: Path) -> None:
    entry = {
        "key": machine_key(),
        "extra_bufts": False,
        "detail": "killed by SIGILL",
        "decided": "2026-01-02T03:04:05+00:00",
    }
    verdict_path(tmp_path).write_text(json.dumps(entry))
    done = models(tmp_path)
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("llama.cpp:"))
    assert "extra buffer types off" in line and "probe on 2026-01-02: killed by SIGILL" in line
    assert str(verdict_path(tmp_path)) in line
    assert done.stderr == ""


def test_a_bad_override_is_refused_with_exit_2(tmp_path: Path) -> None:
    done = models(tmp_path, **{ENV: "maybe"})
    assert done.returncode == 2
    assert f"{ENV} must be 0 or 1" in done.stderr


@pytest.mark.model
def test_models_probes_once_then_shows_the_cached_verdict(tmp_path: Path) -> None:
    first = models(tmp_path)
    assert first.returncode == 0, first.stderr
    assert "probed now:" in first.stdout and str(verdict_path(tmp_path)) in first.stdout
    cached = json.loads(verdict_path(tmp_path).read_text())
    second = models(tmp_path)
    mode = "on" if cached["extra_bufts"] else "off"
    assert f"extra buffer types {mode} (cached verdict of a probe on {cached['decided'][:10]}" in second.stdout
    assert second.stderr == ""
