"""`loci doctor`: CPU flags, llama.cpp's system info, the verdict and a short speed check on the bundled model."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from loci.runtime.models.llama.verdict import ENV, verdict_path


def doctor(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if key != ENV}
    environ["LOCI_HOME"] = str(home)
    command = [sys.executable, "-m", "loci.runtime.cli.main", "doctor", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=environ)


@pytest.mark.parametrize("args", [["--prompt-tokens", "0"], ["--tokens", "0"], ["--threads", "0"]])
def test_doctor_refuses_sizes_it_cannot_measure(tmp_path: Path, args: list[str]) -> None:
    done = doctor(tmp_path, *args)
    assert done.returncode == 2
    assert "--prompt-tokens, --tokens and --threads must be at least 1" in done.stderr
    assert done.stdout == ""


@pytest.mark.model
def test_doctor_reports_flags_system_info_verdict_and_speed(tmp_path: Path) -> None:
    done = doctor(tmp_path, "--prompt-tokens", "24", "--tokens", "4", "--threads", "1")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(r"^cpu flags that matter: .*\S", out, re.MULTILINE)
    assert re.search(r"^llama-cpp-python: \d+\.\d+", out, re.MULTILINE)
    assert "llama.cpp system info: " in out and "CPU :" in out
    assert re.search(r"^verdict: llama\.cpp extra buffer types (on|off) \(probed now", out, re.MULTILINE)
    assert f"verdict cache: {verdict_path(tmp_path)}" in out and verdict_path(tmp_path).exists()
    assert re.search(r"extra buffer types (on|off), 1 thread\)", out)
    speed = re.search(r"prompt ([\d.]+) tok/s \(24 tokens\), generation ([\d.]+) tok/s \(4 tokens\)", out)
    assert speed and float(speed.group(1)) > 0 and float(speed.group(2)) > 0
