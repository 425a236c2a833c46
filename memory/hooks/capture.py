"""`hook capture`: the session's transcript into memory, incrementally, at stop, compaction and session end.

Claude Code gives the hook the transcript's path (`transcript_path`), Codex
the session's rollout (memory/hooks/codex.py says which and finds it); the
capture imports it as `loci memory import` does (memory/imports/), so each
run adds only the records written since the last one, and the session's
episode (its `episodic` node, linked to its turns) is rewritten to hold the
whole session. Tool calls and results go to one context object per capture.

A hook runs under the client's timeout (`hooks install` writes 30 s), so a
home locked by another process is waited for `BUSY_TIMEOUT_S` at most, then
the capture gives up with "locked by another process" in the hooks log.
Nothing is lost: what a capture did not write is not in the import ledger,
so the next capture of the session imports it. The transcript must be a
regular file (memory/regular.py): a FIFO or a device is refused, not read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph
from loci.memory.hooks.codex import transcript_of
from loci.memory.imports.files import import_file
from loci.memory.projects import DEFAULT_PROJECT

__all__ = ["BUSY_TIMEOUT_S", "hook_capture"]

BUSY_TIMEOUT_S = 8.0


async def hook_capture(db: Path, payload: dict[str, Any], project: str = DEFAULT_PROJECT) -> str:
    """Import the transcript named in `payload` into `project` of the home at `db`; a one-line summary (for the
    log, not the client)."""
    transcript, fmt = transcript_of(payload)
    async with await Store.open(db, busy_timeout=BUSY_TIMEOUT_S) as store:
        graph, contexts = Graph(store, project=project), ContextStore(store, project=project)
        report = await import_file(graph, transcript, fmt, contexts)
    return f"{report.added} new turns from {transcript}"
