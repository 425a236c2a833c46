"""The hooks' own record beside the home's database: one line per failure in `hooks.log`, and each hook's last run.

A hook must never block the client, so a failing hook exits 0 and writes
here instead; `loci doctor` reads the last lines of each hook back, so a
hook that has been failing silently for weeks shows itself. A line is
`ISO time<TAB>hook<TAB>event<TAB>error`, and the file is cut to its last
lines when it grows past a bound. The Claude Code plugin's launcher writes
a line of the same shape when it cannot find `loci` at all.

Each run, failed or not, also rewrites `hooks-ran/<hook>` with its time,
event and outcome (`log_run`), so `loci doctor` can tell a hook that never
ran (a client that skips it: Codex's untrusted hooks, a plugin whose
command cannot start) from one that runs and finds nothing.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

__all__ = ["LOG_NAME", "RAN_DIR", "last_errors", "last_runs", "log_failure", "log_path", "log_run"]

LOG_NAME = "hooks.log"
RAN_DIR = "hooks-ran"
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


def log_run(db: Path, hook: str, event: str, ok: bool) -> None:
    """Record that `hook` ran now for `event` (`ok`: without an error); a file that cannot be written is let be."""
    folder = Path(db).expanduser().parent / RAN_DIR
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')}\t{event or '-'}\t{'ok' if ok else 'failed'}\n"
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{hook}.{os.getpid()}"
        partial.write_text(line, encoding="utf-8")
        os.replace(partial, folder / hook)


def last_runs(db: Path) -> dict[str, str]:
    """hook -> "TIME EVENT: ok|failed" of its last run, for the hooks that ever ran beside the home `db`."""
    found = {}
    for hook in ("recall", "capture"):
        with contextlib.suppress(OSError, ValueError):
            when, event, outcome = (Path(db).expanduser().parent / RAN_DIR / hook).read_text("utf-8").split("\t")
            found[hook] = f"{when} {event}: {outcome.strip()}"
    return found
