"""BEAM chats: long user/assistant conversations about one project, in batches, with numbered messages.

A chat (`chat.json` of a BEAM `chats/<size>/<n>/` folder) is a list of
batches `{batch_number, time_anchor?, turns}`, where `turns` is a list of
exchanges and each exchange a list of messages `{role, id, content,
time_anchor?}`. A message's `id` is its ref (the probing questions name
their evidence by it, `source_chat_ids`), its role the speaker, its batch
the session, and the session's day the batch's `time_anchor` ("March-15-2024")
or else the first one a message of the batch carries; a batch with none is
undated. The key is the hash of the first message, as for JSONL messages, so
a longer version of the chat adds only its new messages. `loci bench recall`
reads BEAM through this module (bench/recall/data.py).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from loci.memory.graph.conversation import Turn
from loci.memory.imports.records import Conversation, bad, load_json, when_of

__all__ = ["is_beam", "read_beam"]


def is_beam(data: Any) -> bool:
    """Whether a parsed JSON document is a BEAM chat: a list of batches, each with its `turns`."""
    return isinstance(data, list) and bool(data) and all(isinstance(b, dict) and "turns" in b for b in data)


def read_beam(text: str, source: str) -> list[Conversation]:
    """The one conversation of a BEAM `chat.json`."""
    data = load_json(text, source)
    if not is_beam(data):
        bad(source, "line 1", "not a BEAM chat (a list of batches with their turns)")
    turns: list[Turn] = []
    for place, batch in enumerate(data, start=1):
        session = str(batch.get("batch_number") or place)
        messages = _messages(batch, source, f"batch {session}")
        anchor = batch.get("time_anchor") or next((m["time_anchor"] for m in messages if m.get("time_anchor")), None)
        said = when_of(anchor) if anchor else None
        for index, message in enumerate(messages, start=1):
            where = f"batch {session}, message {index}"
            content = message.get("content")
            if not isinstance(content, str):
                bad(source, where, 'a message needs a "content" string')
            ref = message.get("id")
            ref = f"{session}:{index}" if ref is None else str(ref)
            speaker = str(message.get("role") or "")
            turns.append(Turn(speaker=speaker, text=content, ref=ref, session=session, said=said))
    if not turns:
        bad(source, "line 1", "no messages in the chat")
    first = json.dumps(turns[0].text)
    key = "beam:" + hashlib.sha256(first.encode()).hexdigest()[:16]
    return [Conversation(key=key, title=Path(source).parent.name or Path(source).stem, turns=turns)]


def _messages(batch: dict[str, Any], source: str, where: str) -> list[dict[str, Any]]:
    exchanges = batch.get("turns")
    if not isinstance(exchanges, list):
        bad(source, where, "a batch's turns must be a list of exchanges")
    messages = []
    for exchange in exchanges:
        for message in exchange if isinstance(exchange, list) else [exchange]:
            if not isinstance(message, dict):
                bad(source, where, "a message must be an object")
            messages.append(message)
    return messages
