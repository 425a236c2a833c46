"""Helpers for tests that run `loci` as a user does: a subprocess, and a scripted model in a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["loci", "script"]


def loci(*args: str, home: Path, timeout: float = 300, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`loci ARGS` in a subprocess, with `home` as its LOCI_HOME and `stdin` (if given) as its input."""
    env = {**os.environ, "LOCI_HOME": str(home)}
    command = [sys.executable, "-m", "loci.runtime.cli.main", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, input=stdin)


def script(tmp_path: Path, replies: list[dict]) -> str:
    """A `scripted:` model spec whose replies are `replies`, written to a file in `tmp_path`."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies), encoding="utf-8")
    return f"scripted:{path}"
