"""JSONL messages, the plainest transcript: one `{"role"|"speaker", "content"|"text", "timestamp"?}` a line.

The first of `SPEAKER_KEYS` present names the speaker, of `TEXT_KEYS` the
words and of `DATE_KEYS` the time, so the common variants (`name`,
`author`, `message`, `date`, `created_at`) read too. The words may also be a
list of `{"type": "text", "text": ...}` parts (the shape chat APIs use).
The timestamp is optional, but once a line has one every later line must
too (a turn without a day would lose its resolved dates). A `session`
field groups turns; without one a new session starts when the day changes.
A line's `id`, if it has one, is its ref, else its line number, so
appending lines to the file and importing it again adds only the appended
turns. The key is the hash of the first line: the same conversation keeps
it however long it grows.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from loci.memory.graph.conversation import Turn
from loci.memory.imports.records import Conversation, bad, json_lines, when_of

__all__ = ["DATE_KEYS", "SPEAKER_KEYS", "TEXT_KEYS", "is_message", "read_messages", "text_of"]

SPEAKER_KEYS = ("speaker", "role", "name", "author")
TEXT_KEYS = ("content", "text", "message")
DATE_KEYS = ("timestamp", "date", "time", "created_at", "date_time")


def _first(record: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((record[key] for key in keys if record.get(key) is not None), None)


def is_message(record: dict[str, Any]) -> bool:
    """Whether a JSONL record looks like a message: a speaker and some words."""
    return _first(record, SPEAKER_KEYS) is not None and _first(record, TEXT_KEYS) is not None


def text_of(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a list of parts; None when it is neither."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text") or "") if isinstance(part, dict) else str(part)
            for part in content
            if isinstance(part, str) or (isinstance(part, dict) and part.get("type", "text") == "text")
        )
    return None


def read_messages(text: str, source: str) -> list[Conversation]:
    """The one conversation of a JSONL messages file."""
    turns: list[Turn] = []
    first = ""
    dated = False
    previous_day, number = None, 0
    for line, record in json_lines(text, source):
        where = f"line {line}"
        first = first or text.splitlines()[line - 1].strip()
        speaker = _first(record, SPEAKER_KEYS)
        if isinstance(speaker, dict):
            speaker = speaker.get("name") or speaker.get("role")
        if not isinstance(speaker, str) or not speaker.strip():
            bad(source, where, 'a message needs a "role" or a "speaker"')
        content = text_of(_first(record, TEXT_KEYS))
        if content is None:
            bad(source, where, 'a message needs a "content" or a "text" string')
        said, stamp = None, _first(record, DATE_KEYS)
        if stamp is not None:
            said = when_of(stamp)
            if said is None:
                bad(source, where, f"timestamp {stamp!r} is not a date this reader knows")
            dated = True
        elif dated:
            bad(source, where, "missing timestamp (the lines before it have one)")
        if said != previous_day or not turns:
            number += 1
            previous_day = said
        session = str(record["session"]) if record.get("session") is not None else str(number)
        ref = str(record["id"]) if record.get("id") is not None else f"line:{line}"
        turns.append(Turn(speaker=speaker.strip(), text=content, ref=ref, session=session, said=said))
    if not turns:
        bad(source, "line 1", "no messages in the file")
    key = "jsonl:" + hashlib.sha256(first.encode()).hexdigest()[:16]
    return [Conversation(key=key, title=Path(source).stem, turns=turns)]
