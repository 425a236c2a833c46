"""Running one hook: `python -m memory.hooks recall|capture [--db PATH]` (memory/hooks/__main__.py).

This is the command `loci hooks install` writes into the client's settings:
it imports only the memory layer (no model, no MCP, no CLI), so the process
starts fast, and it never fails the client: whatever goes wrong (bad JSON on
stdin, a locked home, a missing transcript) it writes one line to the hooks
log beside the home (memory/hooks/log.py) and exits 0. `loci hook recall`
and `loci hook capture` run the same code from the full CLI.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from memory.hooks.capture import hook_capture
from memory.hooks.log import log_failure
from memory.hooks.recall import hook_recall
from memory.store import Store, default_db_path

__all__ = ["HOOKS", "main", "run_hook", "safe_hook"]

HOOKS = {"recall": hook_recall, "capture": hook_capture}


async def run_hook(hook: str, db: Path, stdin: str) -> str:
    """Run one hook on the event JSON `stdin`; its stdout ("" for capture). Raises what went wrong."""
    payload: Any = json.loads(stdin) if stdin.strip() else {}
    if not isinstance(payload, dict):
        raise ValueError("the hook input is not a JSON object")
    async with await Store.open(db) as store:
        out = await HOOKS[hook](store, payload)
    return out if hook == "recall" else ""


async def safe_hook(hook: str, db: Path, stdin: str) -> int:
    """`run_hook`, printing its output; any failure is logged and the exit code is still 0."""
    try:
        out = await run_hook(hook, db, stdin)
    except Exception as exc:  # noqa: BLE001 - a hook never fails its client
        event = ""
        with contextlib.suppress(ValueError, AttributeError):
            event = str(json.loads(stdin).get("hook_event_name") or "")
        log_failure(db, hook, event, exc)
        return 0
    if out:
        print(out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    hook = args[0] if args else ""
    db = Path(args[args.index("--db") + 1]) if "--db" in args[:-1] else default_db_path()
    if hook not in HOOKS:
        log_failure(db, hook or "?", "", ValueError(f"unknown hook {hook!r}; use recall or capture"))
        return 0
    return anyio.run(safe_hook, hook, db, sys.stdin.read())
