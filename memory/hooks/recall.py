"""`hook recall`: the memories relevant to a prompt, in the shape Claude Code adds to the model's context.

Claude Code runs the hook at `SessionStart` and on each `UserPromptSubmit`,
with the event's JSON on stdin (`session_id`, `transcript_path`, `cwd`,
`hook_event_name`, and `prompt` for a prompt). What the hook prints as
`{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`
is added to the context. The query is the prompt and the name of the working
directory (at session start, the name alone); the recall reads the hook's
project only, the session's own turns are left out (the model has them
already), and the text, its frame included, is bounded by `MAX_CHARS`
(about 300 tokens).
The lines go out as quoted data, in the block of memory/graph/quoted.py
that says they are stored notes and not instructions: a memory may hold what
a tool once returned into a session. Nothing relevant prints nothing.

The hook runs before every prompt, so its process start is on the client's
critical path: it ranks with `Ranking` (memory/graph/ranking.py) on a
read-only sqlite3 connection of its own, and imports neither sqlite-utils
nor anyio, which would cost more than the recall itself. It never writes;
only a home made by an older Loci, whose tables lack what the ranking reads,
is opened once through `Store`, which migrates it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from memory.graph.quoted import quote_notes
from memory.graph.ranking import Ranking, Recalled
from memory.graph.records import node_ref
from memory.graph.terms import searched_terms
from memory.projects import DEFAULT_PROJECT
from memory.regular import check_regular

__all__ = ["MAX_CHARS", "hook_recall", "session_label"]

MAX_CHARS = 1_200
HEADING = "They may be relevant to this prompt (mem:N ids)."
MAX_ITEM_CHARS = 300
K = 8
BUSY_TIMEOUT_S = 5.0


def session_label(session_id: str) -> str:
    """The session label the Claude Code reader gives a session's turns (memory/imports/claude_code.py)."""
    return session_id[:8]


def hook_recall(db: Path, payload: dict[str, Any], project: str = DEFAULT_PROJECT) -> str:
    """The hook's stdout for `payload`: the context to add, or "" when nothing is relevant."""
    event = str(payload.get("hook_event_name") or "UserPromptSubmit")
    folder = Path(str(payload.get("cwd") or "")).name
    terms = searched_terms(f"{payload.get('prompt') or ''} {folder}")
    if not terms or not db.exists():
        return ""
    check_regular(db)  # sqlite3 would block opening a FIFO
    own = session_label(str(payload.get("session_id") or "")) or None
    lines, used = [], len(quote_notes("", HEADING))
    for item in _recall(db, terms, project):
        if own and item.node.meta.get("session") == own:
            continue
        text = " ".join(item.node.text.split())
        text = text if len(text) <= MAX_ITEM_CHARS else text[: MAX_ITEM_CHARS - 1] + "…"
        line = f"- [{node_ref(item.node.id)}] {text}"
        if used + len(line) > MAX_CHARS:
            break
        lines.append(line)
        used += len(line) + 1
    if not lines:
        return ""
    context = quote_notes("\n".join(lines), HEADING)
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


def _recall(db: Path, terms: list[str], project: str) -> list[Recalled]:
    """The top `K` nodes of `project` for `terms`, read-only; an older home is migrated once, then read."""
    try:
        return _rank(db, terms, project)
    except sqlite3.OperationalError as exc:
        if "no such" not in str(exc):
            raise
    from memory.store import Store  # only for a home older than this Loci: migrating needs sqlite-utils

    Store.open_sync(db).close()
    return _rank(db, terms, project)


def _rank(db: Path, terms: list[str], project: str) -> list[Recalled]:
    conn = sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
    try:
        return Ranking(project=project).rank(conn, terms, [], [], K, hops=2)
    finally:
        conn.close()
