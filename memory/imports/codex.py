"""Codex's session rollouts: the JSONL files under `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.

Every line is `{"timestamp", "type", "payload"}`. The first is `session_meta`
(its payload holds the session's `id`, `cwd`, `cli_version`); after it come
`turn_context` (the model and settings of a turn), `response_item` (what
was sent to and received from the model: `message`, `reasoning`,
`function_call`, `function_call_output`, `custom_tool_call`,
`custom_tool_call_output`, `local_shell_call`, `web_search_call`),
`event_msg` (what the person saw: `user_message`, `agent_message`,
`token_count`, ...) and `compacted`.

What was said is read from the `user_message` and `agent_message` events:
their text is what the person typed and what the agent answered, while the
`message` response items also carry what Codex injects as user messages
(the environment, AGENTS.md). A rollout written before Codex kept those
events has none, and is read from its `message` items instead, with the
injected ones left out by their opening tag. Tool calls and their outputs
become `ToolRecord`s (context objects beside the memories, not memories);
reasoning, token counts and the rest are bookkeeping and are skipped.

A rollout only grows, so a line's number is its ref: importing the same
file again (or capturing it at each `Stop` hook) adds only the new lines.
The key is the session's id, and so is the session label, as for Claude
Code (memory/imports/claude_code.py): the recall hook leaves out the turns
whose label is the running session's id. A prefix would not tell sessions
apart: Codex's ids are UUIDv7, whose first 8 characters change every 65 s. A line without a timestamp takes
the session's; a rollout with neither is an error naming the line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loci.memory.graph.conversation import Turn
from loci.memory.imports.records import Conversation, ToolRecord, bad, json_lines, when_of

__all__ = ["ROLLOUT_TYPES", "is_codex", "read_codex"]

ROLLOUT_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
EVENT_SPEAKERS = {"user_message": "User", "agent_message": "Assistant"}
ITEM_SPEAKERS = {"user": "User", "assistant": "Assistant"}
INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>")
TOOL_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output")
TOOL_TEXT_CHARS = 4_000


def is_codex(record: dict[str, Any]) -> bool:
    """Whether a JSONL record looks like a line of a Codex rollout."""
    return record.get("type") in ROLLOUT_TYPES and isinstance(record.get("payload"), dict)


def read_codex(text: str, source: str) -> list[Conversation]:
    """The one session of a rollout file."""
    lines = [(line, record) for line, record in json_lines(text, source) if is_codex(record)]
    meta = next((record["payload"] for _, record in lines if record["type"] == "session_meta"), {})
    session = str(meta.get("id") or Path(source).stem)
    started = meta.get("timestamp") or next((r.get("timestamp") for _, r in lines if r.get("timestamp")), None)
    from_events = any(r["type"] == "event_msg" and r["payload"].get("type") in EVENT_SPEAKERS for _, r in lines)
    turns: list[Turn] = []
    tools: list[ToolRecord] = []
    for line, record in lines:
        payload, stamp = record["payload"], record.get("timestamp") or started
        said = when_of(stamp)
        spoken = _spoken(record["type"], payload, from_events)
        done = _tool(record["type"], payload)
        if (spoken or done) and said is None:
            bad(source, f"line {line}", "missing timestamp" if stamp is None else "timestamp is not a date")
        ref = f"line:{line}"
        if spoken and spoken[1].strip():
            turns.append(Turn(spoken[0], spoken[1], ref=ref, session=session, said=said))
        if done:
            tools.append(ToolRecord(ref, f"[{stamp}] {done}"))
    info = {"session_id": session, "cwd": str(meta.get("cwd") or ""), "client": "codex"}
    title = f"Codex session {session}"
    return [Conversation(key=f"codex:{session}", title=title, turns=turns, tools=tools, meta=info)]


def _spoken(kind: str, payload: dict[str, Any], from_events: bool) -> tuple[str, str] | None:
    """`(speaker, text)` when the line is something said, read from events or (older rollouts) message items."""
    if from_events:
        if kind == "event_msg" and payload.get("type") in EVENT_SPEAKERS:
            return EVENT_SPEAKERS[payload["type"]], str(payload.get("message") or "")
        return None
    if kind != "response_item" or payload.get("type") != "message" or payload.get("role") not in ITEM_SPEAKERS:
        return None
    words = _words(payload.get("content"))
    if not words or words.lstrip().startswith(INJECTED):
        return None
    return ITEM_SPEAKERS[payload["role"]], words


def _tool(kind: str, payload: dict[str, Any]) -> str | None:
    """A tool call or its output as one line of text, or None."""
    if kind != "response_item":
        return None
    what, call = payload.get("type"), payload.get("call_id") or payload.get("id")
    if what in TOOL_CALLS:
        name = payload.get("name") or what
        given = payload.get("arguments") or payload.get("input") or payload.get("action")
        given = given if isinstance(given, str) else json.dumps(given, ensure_ascii=False)
        return f"tool call {name} ({call}): {given[:TOOL_TEXT_CHARS]}"
    if what in TOOL_OUTPUTS:
        output = payload.get("output")
        output = output.get("content", output) if isinstance(output, dict) else output
        result = _words(output)
        result = result if result is not None else json.dumps(output, ensure_ascii=False)
        return f"tool result ({call}): {result[:TOOL_TEXT_CHARS]}"
    return None


def _words(content: Any) -> str | None:
    """The text of a string, or of a list of content parts (`input_text`, `output_text`, ...); None otherwise."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p if isinstance(p, str) else str(p["text"]) for p in content if _has_text(p))
    return None


def _has_text(part: Any) -> bool:
    return isinstance(part, str) or (isinstance(part, dict) and isinstance(part.get("text"), str))
