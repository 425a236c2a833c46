"""A conversation file as the context store keeps it: one turn a line, read by the importers' parsers.

A file of dated speaker turns is a conversation, whatever its format, and
`loci memory import` and the context store read it with the same readers
(`memory.imports.files.sniff_conversations`: `[date] Speaker: text` lines,
JSONL messages, LoCoMo, Claude Code transcripts, a ChatGPT export). The
importers remember its `Turn`s as a graph; the context store, given
`conversation_document` by the session, stores the text that
`render_turns` writes: one line a turn, as memory recall remembers it
(`turn_text`: the day, the speaker, the words, each relative date resolved
against the day it was said, "last Saturday = 6 May 2023"), so line N of a
loaded conversation is turn N and its search works by turn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from loci.memory.graph.conversation import Turn, turn_text
from loci.memory.imports.files import sniff_conversations

__all__ = ["MIN_TURNS", "Transcript", "conversation_document", "parse_transcript", "render_turns"]

MIN_TURNS = 2


@dataclass(frozen=True)
class Transcript:
    """A conversation read from a file: its turns, and the format they were written in."""

    turns: list[Turn]
    layout: str  # a conversation format of `memory.imports.files`: "text", "jsonl", "locomo", ...

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


def parse_transcript(text: str, source: str = "the file") -> Transcript | None:
    """The conversation `text` holds, or None when it is not one in a known format (never raises)."""
    found = sniff_conversations(text, source)
    if found is None:
        return None
    layout, conversations = found
    several = len(conversations) > 1
    turns = [
        replace(turn, session=f"{index}/{turn.session}") if several else turn
        for index, conversation in enumerate(conversations, start=1)
        for turn in conversation.turns
    ]
    return Transcript(turns, layout) if len(turns) >= MIN_TURNS else None


def conversation_document(text: str) -> tuple[str, dict[str, Any]] | None:
    """A conversation file as the context store keeps it: one turn a line, and its meta; None if not one."""
    transcript = parse_transcript(text)
    return (render_turns(transcript.turns), transcript.meta()) if transcript else None


def render_turns(turns: list[Turn]) -> str:
    """One line a turn, as recall remembers it: `[day] Speaker: text (relative date = its day)`."""
    return "\n".join(" ".join(turn_text(turn).split()) for turn in turns)
