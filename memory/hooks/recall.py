"""`hook recall`: the memories relevant to a prompt, in the shape Claude Code adds to the model's context.

Claude Code runs the hook at `SessionStart` and on each `UserPromptSubmit`,
with the event's JSON on stdin (`session_id`, `transcript_path`, `cwd`,
`hook_event_name`, and `prompt` for a prompt). What the hook prints as
`{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`
is added to the context. The query is the prompt and the name of the working
directory (at session start, the name alone), the recall is read-only
(`record=False`: a hook never writes, and stays fast), the session's own
turns are left out (the model has them already), and the text is bounded
by `MAX_CHARS` (about 300 tokens). Nothing relevant prints nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memory.errors import UsageError
from memory.graph.graph import Graph
from memory.graph.recall import Recall
from memory.graph.schema import node_ref
from memory.store import Store

__all__ = ["MAX_CHARS", "hook_recall", "session_label"]

MAX_CHARS = 1_200
MAX_ITEM_CHARS = 300
K = 8


def session_label(session_id: str) -> str:
    """The session label the Claude Code reader gives a session's turns (memory/imports/claude_code.py)."""
    return session_id[:8]


async def hook_recall(store: Store, payload: dict[str, Any]) -> str:
    """The hook's stdout for `payload`: the context to add, or "" when nothing is relevant."""
    event = str(payload.get("hook_event_name") or "UserPromptSubmit")
    project = Path(str(payload.get("cwd") or "")).name
    query = f"{payload.get('prompt') or ''} {project}".strip()
    if not query:
        return ""
    own = session_label(str(payload.get("session_id") or "")) or None
    try:
        found = await Recall(Graph(store)).recall(query, k=K, record=False)
    except UsageError:
        return ""
    lines, used = [], 0
    for item in found:
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
    context = "Memories from Loci that may be relevant (mem:N ids):\n" + "\n".join(lines)
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})
