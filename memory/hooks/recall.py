"""`hook recall`: the memories relevant to a prompt, in the shape Claude Code and Codex add to the model's context.

The client runs the hook at `SessionStart` and on each `UserPromptSubmit`,
with the event's JSON on stdin (`session_id`, `transcript_path`, `cwd`,
`hook_event_name`, `source` at a session's start and `prompt` for a prompt).
What the hook prints as
`{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`
is added to the context. The query is the prompt and the name of the working
directory (at session start, the name alone); the recall reads the hook's
project only, and the text, its frame included, is bounded by `MAX_CHARS`
(about 300 tokens). What is listed is what the model does not hold already:

- the session's own turns and episode are left out (the model has them): a
  node is the session's when its session label is the whole session id
  (memory/imports/: a prefix would not do, Codex's ids are UUIDv7);
- a node injected earlier in the session is left out (memory/hooks/seen.py),
  so the notes SessionStart added are not repeated by the first prompt;
- an episode and its own turns never both take room: the first of them in
  rank order is listed, and an episode holds its turns' text;
- a text already listed, or held in one listed, is not listed again.

The lines go out as quoted data, in the block of memory/graph/quoted.py
that says they are stored notes and not instructions: a memory may hold what
a tool once returned into a session. Nothing relevant prints nothing.

The hook runs before every prompt, so its process start is on the client's
critical path: it ranks with `Ranking` (memory/graph/ranking.py) on a
read-only sqlite3 connection of its own, and imports neither sqlite-utils
nor anyio, which would cost more than the recall itself. It never writes to
the home; only a home made by an older Loci, whose tables lack what the
ranking reads, is opened once through `Store`, which migrates it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from loci.memory.graph.quoted import quote_notes
from loci.memory.graph.ranking import Ranking, Recalled
from loci.memory.graph.records import node_ref
from loci.memory.graph.terms import searched_terms
from loci.memory.hooks.seen import forget_stale, remember_seen, seen_ids, starts_fresh
from loci.memory.projects import DEFAULT_PROJECT
from loci.memory.regular import check_regular

__all__ = ["MAX_CHARS", "hook_recall", "pick"]

MAX_CHARS = 1_200
HEADING = "They may be relevant to this prompt (mem:N ids)."
MAX_ITEM_CHARS = 300
K = 12
BUSY_TIMEOUT_S = 5.0


def hook_recall(db: Path, payload: dict[str, Any], project: str = DEFAULT_PROJECT) -> str:
    """The hook's stdout for `payload`: the context to add, or "" when nothing is relevant."""
    event = str(payload.get("hook_event_name") or "UserPromptSubmit")
    session = str(payload.get("session_id") or "")
    fresh = starts_fresh(event, str(payload.get("source") or ""))
    if fresh:
        forget_stale(db)
    seen = set() if fresh else seen_ids(db, session)
    folder = Path(str(payload.get("cwd") or "")).name
    terms = searched_terms(f"{payload.get('prompt') or ''} {folder}")
    if not terms or not db.exists():
        if fresh:
            remember_seen(db, session, seen)
        return ""
    check_regular(db)  # sqlite3 would block opening a FIFO
    lines, shown = pick(_recall(db, terms, project), session, seen)
    if fresh or shown:
        remember_seen(db, session, seen | shown)
    if not lines:
        return ""
    context = quote_notes("\n".join(lines), HEADING)
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


def pick(found: list[Recalled], session: str, seen: set[int]) -> tuple[list[str], set[int]]:
    """The lines to list from `found` (rank order) for `session`, within `MAX_CHARS`, and their node ids."""
    lines: list[str] = []
    shown: set[int] = set()
    texts: list[str] = []
    episodes, turned = set(), set()  # sessions whose episode, or one of whose turns, is listed
    used = len(quote_notes("", HEADING))
    for item in found:
        node = item.node
        label = str(node.meta.get("session") or "")
        episode = node.kind == "episodic"
        if node.id in seen or (session and label == session):
            continue
        if label and (label in episodes or (episode and label in turned)):
            continue
        text = " ".join(node.text.split())
        if any(text in other for other in texts):
            continue
        text = text if len(text) <= MAX_ITEM_CHARS else text[: MAX_ITEM_CHARS - 1] + "…"
        line = f"- [{node_ref(node.id)}] {text}"
        if used + len(line) > MAX_CHARS:
            break
        lines.append(line)
        shown.add(node.id)
        texts.append(" ".join(node.text.split()))
        if label:
            (episodes if episode else turned).add(label)
        used += len(line) + 1
    return lines, shown


def _recall(db: Path, terms: list[str], project: str) -> list[Recalled]:
    """The top `K` nodes of `project` for `terms`, read-only; an older home is migrated once, then read."""
    try:
        return _rank(db, terms, project)
    except sqlite3.OperationalError as exc:
        if "no such" not in str(exc):
            raise
    from loci.memory.engines.sqlite.store import (
        Store,  # only for a home older than this Loci: migrating needs sqlite-utils
    )

    Store.open_sync(db).close()
    return _rank(db, terms, project)


def _rank(db: Path, terms: list[str], project: str) -> list[Recalled]:
    conn = sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
    try:
        return Ranking(project=project).rank(conn, terms, [], [], K, hops=2)
    finally:
        conn.close()
