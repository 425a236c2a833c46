"""Reading a conversation file: the one parser of transcripts, by layout.

A file of dated speaker turns is a conversation, whatever its layout, and is
read into `Turn`s (`memory.graph.conversation`) with its structure: speaker,
text, the day each turn was said, its session and its own id. Three layouts
are recognised:

- text, one turn a line: `[8 May 2023] Caroline: I went ...` (any date
  `memory.graph.dates.parse_when` reads, such as `1:56 pm on 8 May, 2023`);
  a new session starts where the date changes; at least `MIN_TURNS` such
  lines, and most non-blank lines are turns;
- JSONL messages, one JSON object a line, with a speaker (`speaker`, `name`
  or `role`), a text (`text` or `content`) and optionally a date (`date`,
  `timestamp`, `time`, `created_at`) and a `session`;
- the LoCoMo JSON format: a sample (or a list of samples) whose
  `conversation` holds `session_N` lists of turns and `session_N_date_time`.

`render_turns` writes turns back one a line as memory recall remembers them
(`turn_text`: the day, the speaker, the words, each relative date resolved
against the day it was said, "last Saturday = 6 May 2023"), so line N of a
loaded conversation is turn N: the context store loads a conversation file
this way (`conversation_document`, the reader the session gives
`memory.context.store.ContextStore`), and `loci memory import` can remember the
same `Turn`s as a graph (`remember_conversation`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memory.graph.conversation import Turn, turn_text
from memory.graph.dates import parse_when

__all__ = ["MIN_TURNS", "Transcript", "conversation_document", "locomo_turns", "parse_transcript", "render_turns"]

MIN_TURNS = 2
TURN_SHARE = 0.6  # of the non-blank lines, in the text layout
_TEXT_TURN = re.compile(r"^\[(?P<when>[^\]]{4,40})\]\s+(?P<speaker>[^\s:\[\]][^:\[\]]{0,40}?):\s+(?P<text>.*)$")
_SESSION = re.compile(r"^session_(\d+)$")
_SPEAKER_KEYS = ("speaker", "name", "role", "author")
_TEXT_KEYS = ("text", "content", "message")
_DATE_KEYS = ("date", "timestamp", "time", "created_at", "date_time")


@dataclass(frozen=True)
class Transcript:
    """A conversation read from a file: its turns, and the layout they were written in."""

    turns: list[Turn]
    layout: str  # "text", "jsonl" or "locomo"

    @property
    def speakers(self) -> list[str]:
        return list(dict.fromkeys(turn.speaker for turn in self.turns if turn.speaker))

    @property
    def sessions(self) -> list[str]:
        return list(dict.fromkeys(turn.session for turn in self.turns))

    def meta(self) -> dict[str, Any]:
        """What the context store records of it: a `conversation` of so many turns, speakers, sessions."""
        return {
            "format": "conversation",
            "layout": self.layout,
            "turns": len(self.turns),
            "speakers": self.speakers[:20],
            "sessions": len(self.sessions),
        }


def parse_transcript(text: str) -> Transcript | None:
    """The conversation `text` holds, or None when it is not one in a known layout."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")) and not _TEXT_TURN.match(stripped.split("\n", 1)[0]):
        found = _locomo(stripped) or _jsonl(stripped)
    else:
        found = _text(text)
    return found if found and len(found.turns) >= MIN_TURNS else None


def conversation_document(text: str) -> tuple[str, dict[str, Any]] | None:
    """A conversation file as the context store keeps it: one turn a line, and its meta; None if not one."""
    transcript = parse_transcript(text)
    return (render_turns(transcript.turns), transcript.meta()) if transcript else None


def render_turns(turns: list[Turn]) -> str:
    """One line a turn, as recall remembers it: `[day] Speaker: text (relative date = its day)`."""
    return "\n".join(" ".join(turn_text(turn).split()) for turn in turns)


def _text(text: str) -> Transcript | None:
    lines = [line for line in text.splitlines() if line.strip()]
    turns: list[Turn] = []
    session, last_day = 0, None
    for number, line in enumerate(lines, start=1):
        match = _TEXT_TURN.match(line.strip())
        said = parse_when(match["when"]) if match else None
        if match is None or said is None:
            continue
        if said != last_day:
            session, last_day = session + 1, said
        turns.append(Turn(match["speaker"].strip(), match["text"].strip(), str(number), str(session), said))
    if not lines or len(turns) < TURN_SHARE * len(lines):
        return None
    return Transcript(turns, "text")


def _jsonl(text: str) -> Transcript | None:
    turns: list[Turn] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            return None
        speaker, said = _first(item, _SPEAKER_KEYS), _first(item, _TEXT_KEYS)
        if not isinstance(item, dict) or speaker is None or not isinstance(said, str):
            return None
        day = parse_when(_first(item, _DATE_KEYS))
        session = str(item.get("session") or (day.isoformat() if day else "1"))
        turns.append(Turn(str(speaker), said, str(item.get("id") or number), session, day))
    return Transcript(turns, "jsonl")


def _locomo(text: str) -> Transcript | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    samples = data if isinstance(data, list) else [data]
    if not samples or not all(isinstance(s, dict) and isinstance(s.get("conversation"), dict) for s in samples):
        return None
    turns = []
    for sample in samples:
        prefix = f"{sample['sample_id']}/" if len(samples) > 1 and sample.get("sample_id") else ""
        turns += [_in_session(turn, prefix) for turn in locomo_turns(sample)]
    return Transcript(turns, "locomo")


def locomo_turns(sample: dict[str, Any]) -> list[Turn]:
    """Every turn of one LoCoMo sample, in order, with its session's number and date."""
    conversation = sample["conversation"]
    sessions = sorted(int(m.group(1)) for key in conversation if (m := _SESSION.match(key)))
    return [
        Turn(
            speaker=str(turn.get("speaker") or ""),
            text=str(turn.get("text") or ""),
            ref=str(turn.get("dia_id") or ""),
            session=str(number),
            said=parse_when(conversation.get(f"session_{number}_date_time")),
            image=str(turn["blip_caption"]) if turn.get("blip_caption") else None,
        )
        for number in sessions
        for turn in conversation[f"session_{number}"] or []
        if isinstance(turn, dict)
    ]


def _in_session(turn: Turn, prefix: str) -> Turn:
    return Turn(turn.speaker, turn.text, turn.ref, prefix + turn.session, turn.said, turn.image) if prefix else turn


def _first(item: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(item, dict):
        return None
    return next((item[key] for key in keys if item.get(key) is not None), None)
