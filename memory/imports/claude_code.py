"""Claude Code's session transcripts: the JSONL files under `~/.claude/projects/<project>/<session>.jsonl`.

Each line is a record with a `type`. The conversation is in the `user` and
`assistant` records: their `message` is an Anthropic Messages message
(`role`, and `content` as a string or a list of blocks: `text`, `tool_use`,
`tool_result`, `thinking`, `image`), with the record's `uuid`, `sessionId`,
`cwd` and ISO `timestamp`. The other types (`summary`, `system`,
`file-history-snapshot`, ...) and records marked `isMeta` are the client's
bookkeeping and are skipped; every line must still be JSON.

Text blocks become turns ("User", "Assistant"). Tool calls and their results
are what the agent did, not what anyone said: they become `ToolRecord`s,
which the importer keeps as context objects beside the memories, so they can
be read when wanted without flooding recall. Thinking is left out. A
conversation record without a timestamp is an error naming its line.
The key is the session id, so the hook that captures a session as it grows
(`loci hook capture`) adds only its new records each time. The turns'
session label is the whole session id, which the recall hook compares with
the running session's to leave out exactly its own turns (a prefix is not
enough: Codex's ids are UUIDv7, whose first characters are the time).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loci.memory.graph.conversation import Turn
from loci.memory.imports.messages import text_of
from loci.memory.imports.records import Conversation, ToolRecord, bad, json_lines, when_of

__all__ = ["is_claude_code", "read_claude_code"]

SPEAKERS = {"user": "User", "assistant": "Assistant"}
TOOL_TEXT_CHARS = 4_000


def is_claude_code(record: dict[str, Any]) -> bool:
    """Whether a JSONL record looks like a Claude Code transcript line."""
    return isinstance(record.get("type"), str) and (
        "message" in record or "sessionId" in record or "leafUuid" in record
    )


def read_claude_code(text: str, source: str) -> list[Conversation]:
    """The one session of a transcript file."""
    turns: list[Turn] = []
    tools: list[ToolRecord] = []
    session, cwd = "", ""
    for line, record in json_lines(text, source):
        if record.get("type") not in SPEAKERS or record.get("isMeta"):
            continue
        where = f"line {line}"
        message = record.get("message")
        if not isinstance(message, dict):
            bad(source, where, f'a {record["type"]} record needs a "message" object')
        said = when_of(record.get("timestamp"))
        if said is None:
            bad(source, where, "missing timestamp" if record.get("timestamp") is None else "timestamp is not a date")
        session = session or str(record.get("sessionId") or "")
        cwd = cwd or str(record.get("cwd") or "")
        ref = str(record.get("uuid") or f"line:{line}")
        spoken, done = _split(message.get("content"))
        tools += [ToolRecord(f"{ref}:{i}", f"[{record['timestamp']}] {what}") for i, what in enumerate(done)]
        if spoken.strip():
            label = session or Path(source).stem
            turns.append(Turn(SPEAKERS[record["type"]], spoken, ref=ref, session=label, said=said))
    session = session or Path(source).stem
    meta = {"session_id": session, "cwd": cwd}
    return [
        Conversation(
            key=f"claude-code:{session}", title=f"Claude Code session {session}", turns=turns, tools=tools, meta=meta
        )
    ]


def _split(content: Any) -> tuple[str, list[str]]:
    """The spoken text of a message's content, and its tool calls and results as lines of text."""
    if isinstance(content, str):
        return content, []
    spoken, done = [], []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            spoken.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            call = json.dumps(block.get("input"), ensure_ascii=False)[:TOOL_TEXT_CHARS]
            done.append(f"tool call {block.get('name')} ({block.get('id')}): {call}")
        elif kind == "tool_result":
            result = text_of(block.get("content")) or ""
            error = " (error)" if block.get("is_error") else ""
            done.append(f"tool result{error} ({block.get('tool_use_id')}): {result[:TOOL_TEXT_CHARS]}")
    return "\n".join(spoken), done
