"""Running one hook: `python -m loci.memory.hooks recall|capture [--db PATH] [--project P]` (memory/hooks/__main__.py).

This is the command `loci hooks install` writes into the client's settings:
it imports only the memory layer (no model, no MCP, no CLI), so the process
starts fast, and it never fails the client: whatever goes wrong (bad or too
deeply nested JSON on stdin, a locked home, a missing transcript, a client
that closed the pipe before reading the output) it writes one line to the
hooks log beside the home (memory/hooks/log.py) and exits 0. Every run is
recorded too (`log_run`), so `loci doctor` can say which hooks never ran.
`LOCI_HOOK_PROBE=1` in the environment (set by `loci doctor`) makes a hook
exit 0 at once, reading nothing: it proves only that the command starts.
`loci hook recall` and `loci hook capture` run the same code from the full CLI.

Each hook imports its own module when it runs: recall, which runs before
every prompt, is synchronous and never loads what capture needs (the store's
sqlite-utils, anyio, the importers).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loci.memory.hooks.log import log_failure, log_run
from loci.memory.json_input import loads
from loci.memory.projects import DEFAULT_PROJECT, check_project

__all__ = ["HOOKS", "PROBE", "main", "run_hook", "safe_hook"]

HOOKS = ("recall", "capture")
PROBE = "LOCI_HOOK_PROBE"


def run_hook(hook: str, db: Path, stdin: str, project: str = DEFAULT_PROJECT) -> str:
    """Run one hook on the event JSON `stdin`; its stdout ("" for capture). Raises what went wrong."""
    payload: Any = loads(stdin) if stdin.strip() else {}
    if not isinstance(payload, dict):
        raise ValueError("the hook input is not a JSON object")
    check_project(project)
    if hook == "recall":
        from loci.memory.hooks.recall import hook_recall

        return hook_recall(db, payload, project)
    import anyio

    from loci.memory.hooks.capture import hook_capture

    anyio.run(hook_capture, db, payload, project)
    return ""


def safe_hook(hook: str, db: Path, stdin: str, project: str = DEFAULT_PROJECT) -> int:
    """`run_hook`, printing its output; any failure is logged and the exit code is still 0."""
    event = ""
    with contextlib.suppress(Exception):  # the event's name is only for the log lines: any input may be here
        event = str(loads(stdin).get("hook_event_name") or "")
    try:
        out = run_hook(hook, db, stdin, project)
    except Exception as exc:  # noqa: BLE001 - a hook never fails its client
        log_failure(db, hook, event, exc)
        log_run(db, hook, event, ok=False)
        return 0
    log_run(db, hook, event, ok=True)
    if out:
        _print(out)
    return 0


def _print(out: str) -> None:
    """Print the hook's output; a client that closed its end of the pipe gets nothing, and the hook still exits 0."""
    try:
        print(out, flush=True)
    except BrokenPipeError:
        # Python would flush stdout again at exit and fail there: point it at /dev/null first.
        devnull = os.open(os.devnull, os.O_WRONLY)
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    # The client owns the hook's output: the store's notices (a created folder) stay out of its stderr.
    logging.getLogger("loci").addHandler(logging.NullHandler())
    if os.environ.get(PROBE) == "1":
        return 0
    args = list(sys.argv[1:] if argv is None else argv)
    hook = args[0] if args else ""
    db = Path(_option(args, "--db") or _default_db())
    if hook not in HOOKS:
        log_failure(db, hook or "?", "", ValueError(f"unknown hook {hook!r}; use recall or capture"))
        return 0
    return safe_hook(hook, db, sys.stdin.read(), _option(args, "--project") or DEFAULT_PROJECT)


def _option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args[:-1] else None


def _default_db() -> Path:
    from loci.memory.engines.sqlite.store import (
        default_db_path,  # the store module imports sqlite-utils: only when no --db is given
    )

    return default_db_path()
