"""A ChatGPT data export's `conversations.json`: a list of conversations, each a tree of messages.

A conversation has `title`, `create_time` (seconds since the epoch),
`conversation_id` (or `id`), `current_node` and `mapping`: node id ->
`{id, message, parent, children}`, where a message has `author.role`
(`system`, `user`, `assistant`, `tool`), `create_time`, `content`
(`content_type` and `parts`) and `recipient`. Regenerated replies make it a
tree; what the person last saw is the path from the root to `current_node`,
and that path is what is read. Hidden system messages are skipped; tool
messages and an assistant's calls to a tool (`recipient` other than `all`)
become `ToolRecord`s; the rest are turns ("User", "Assistant"). A message
without a `create_time` takes its conversation's; one with neither is an
error naming the conversation and the message.
"""

from __future__ import annotations

from typing import Any

from loci.memory.graph.conversation import Turn
from loci.memory.imports.records import Conversation, ToolRecord, bad, load_json, when_of

__all__ = ["is_chatgpt", "read_chatgpt"]

SPEAKERS = {"user": "User", "assistant": "Assistant"}


def is_chatgpt(data: Any) -> bool:
    """Whether a parsed JSON document is a ChatGPT export: a list of conversations with a `mapping`."""
    return isinstance(data, list) and bool(data) and all(isinstance(c, dict) and "mapping" in c for c in data)


def read_chatgpt(text: str, source: str) -> list[Conversation]:
    data = load_json(text, source)
    if isinstance(data, dict) and "mapping" in data:
        data = [data]
    if not is_chatgpt(data):
        bad(source, "line 1", "not a ChatGPT export (a list of conversations with a mapping each)")
    return [_conversation(item, source, f"conversation {index}") for index, item in enumerate(data, start=1)]


def _conversation(item: dict[str, Any], source: str, where: str) -> Conversation:
    mapping = item.get("mapping")
    if not isinstance(mapping, dict):
        bad(source, where, "its mapping must be an object of messages")
    ident = str(item.get("conversation_id") or item.get("id") or where)
    title = str(item.get("title") or "Untitled")
    turns: list[Turn] = []
    tools: list[ToolRecord] = []
    for node in _path(mapping, item.get("current_node"), source, where):
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        ref = str(message.get("id") or node.get("id"))
        role = str((message.get("author") or {}).get("role") or "")
        text = _text(message.get("content"))
        if role == "system" or not text.strip():
            continue
        said = when_of(message.get("create_time") or item.get("create_time"))
        if said is None:
            bad(source, f"{where} ({title!r}), message {ref}", "missing timestamp (no create_time)")
        if role == "tool" or (role == "assistant" and message.get("recipient") not in (None, "all")):
            tools.append(ToolRecord(ref, f"[{said.isoformat()}] {role} -> {message.get('recipient')}: {text}"))
        elif role in SPEAKERS:
            turns.append(Turn(SPEAKERS[role], text, ref=ref, session=title, said=said))
    return Conversation(key=f"chatgpt:{ident}", title=title, turns=turns, tools=tools)


def _path(mapping: dict[str, Any], current: Any, source: str, where: str) -> list[dict[str, Any]]:
    """The nodes from the root to `current_node` (or, without one, along the last children from the root)."""
    nodes = {key: node for key, node in mapping.items() if isinstance(node, dict)}
    if current is None:
        roots = [key for key, node in nodes.items() if not node.get("parent")]
        current = roots[0] if roots else None
        while current in nodes and nodes[current].get("children"):
            current = nodes[current]["children"][-1]
    path, seen = [], set()
    while current is not None:
        if current in seen:
            bad(source, where, f"its messages form a cycle at {current}")
        if current not in nodes:
            bad(source, where, f"message {current} is named but not in the mapping")
        seen.add(current)
        path.append(nodes[current])
        current = nodes[current].get("parent")
    return path[::-1]


def _text(content: Any) -> str:
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(part for part in parts if isinstance(part, str))
    return str(content.get("text") or "")
