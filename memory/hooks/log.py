"""The hooks' failure log: one line per failure in `hooks.log` beside the home's database.

A hook must never block the client, so a failing hook exits 0 and writes
here instead; `loci doctor` reads the last lines of each hook back, so a
hook that has been failing silently for weeks shows itself. A line is
`ISO time<TAB>hook<TAB>event<TAB>error`, and the file is cut to its last
lines when it grows past a bound.
"""

from __future__ import annotations

import time
from pathlib import Path

__all__ = ["LOG_NAME", "last_errors", "log_failure", "log_path"]

LOG_NAME = "hooks.log"
MAX_LINES = 1_000


def log_path(db: Path) -> Path:
    return Path(db).expanduser().parent / LOG_NAME


def log_failure(db: Path, hook: str, event: str, error: BaseException) -> None:
    """Append one line for a failure; a log that cannot be written is given up on (the hook still exits 0)."""
    what = " ".join(f"{type(error).__name__}: {error}".split())[:500]
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')}\t{hook}\t{event or '-'}\t{what}\n"
    path = log_path(db)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as out:
            out.write(line)
        if path.stat().st_size > MAX_LINES * 200:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
            path.write_text("".join(lines[-MAX_LINES:]), encoding="utf-8")
    except OSError:
        pass


def last_errors(db: Path, per_hook: int = 3) -> dict[str, list[str]]:
    """hook -> its last `per_hook` failure lines (time, event and error), oldest first."""
    try:
        lines = log_path(db).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return {}
    found: dict[str, list[str]] = {}
    for line in lines:
        parts = line.split("\t", 3)
        if len(parts) == 4:
            found.setdefault(parts[1], []).append(f"{parts[0]} {parts[2]}: {parts[3]}")
    return {hook: errors[-per_hook:] for hook, errors in found.items()}
