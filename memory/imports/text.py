"""Plain-text transcripts: one turn a line, `[8 May 2023] Caroline: I went to the support group yesterday.`

The date in brackets is any date `memory.graph.dates.parse_when` reads (`1:56
pm on 8 May, 2023`, `2023-05-08`...), then the speaker, a colon and the
words. A line that is not a turn continues the turn before it (a message of
several lines); a non-blank line before the first turn is an error naming
it. A new session starts where the date changes. The file is this format
when at least `MIN_TURNS` lines are turns and they are most of its non-blank
lines (`TURN_SHARE`), which is what `is_text_transcript` checks. A turn's ref
is its line number; the key is the hash of the first turn's line.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path

from loci.memory.graph.conversation import Turn
from loci.memory.graph.dates import parse_when
from loci.memory.imports.records import Conversation, bad

__all__ = ["MIN_TURNS", "TURN_SHARE", "is_text_transcript", "read_text"]

MIN_TURNS = 2
TURN_SHARE = 0.6
_TURN = re.compile(r"^\[(?P<when>[^\]]{4,40})\]\s+(?P<speaker>[^\s:\[\]][^:\[\]]{0,40}?):\s+(?P<text>.*)$")


def _turn(line: str) -> re.Match[str] | None:
    match = _TURN.match(line.strip())
    return match if match and parse_when(match["when"]) else None


def is_text_transcript(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    turns = sum(1 for line in lines if _turn(line))
    return turns >= MIN_TURNS and turns >= TURN_SHARE * len(lines)


def read_text(text: str, source: str) -> list[Conversation]:
    turns: list[Turn] = []
    session, last_day, first = 0, None, ""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _turn(line)
        if match is None:
            if not turns:
                bad(source, f"line {number}", "not a turn: expected `[date] Speaker: text`")
            turns[-1] = replace(turns[-1], text=f"{turns[-1].text}\n{line.rstrip()}")
            continue
        said = parse_when(match["when"])
        if said != last_day:
            session, last_day = session + 1, said
        first = first or line.strip()
        turns.append(Turn(match["speaker"].strip(), match["text"].strip(), f"line:{number}", str(session), said))
    if not turns:
        bad(source, "line 1", "no turns in the file")
    key = "text:" + hashlib.sha256(first.encode()).hexdigest()[:16]
    return [Conversation(key=key, title=Path(source).stem, turns=turns)]
