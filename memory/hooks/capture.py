"""`hook capture`: the session's transcript into memory, incrementally, at stop, compaction and session end.

Claude Code gives the hook the transcript's path (`transcript_path`), Codex
the session's rollout (memory/hooks/codex.py says which and finds it); the
capture imports it as `loci memory import` does (memory/imports/), so each
run adds only the records written since the last one, and the session's
episode (its `episodic` node, linked to its turns) is rewritten to hold the
whole session. Tool calls and results go to one context object per capture.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory.context.store import ContextStore
from memory.graph.graph import Graph
from memory.hooks.codex import transcript_of
from memory.imports.files import import_file
from memory.projects import DEFAULT_PROJECT
from memory.store import Store

__all__ = ["hook_capture"]


async def hook_capture(db: Path, payload: dict[str, Any], project: str = DEFAULT_PROJECT) -> str:
    """Import the transcript named in `payload` into `project` of the home at `db`; a one-line summary (for the
    log, not the client)."""
    transcript, fmt = transcript_of(payload)
    async with await Store.open(db) as store:
        graph, contexts = Graph(store, project=project), ContextStore(store, project=project)
        report = await import_file(graph, transcript, fmt, contexts)
    return f"{report.added} new turns from {transcript}"
