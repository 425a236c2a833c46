"""The LoCoMo format: a list of samples, each a conversation between two speakers over dated sessions.

A sample's `conversation` has `speaker_a`, `speaker_b`, and for each session
N `session_N_date_time` and `session_N`, a list of turns `{speaker, dia_id,
text, blip_caption?}`; its `qa` (questions with the dia_ids of their
evidence) is what `loci bench recall` asks, and this reader leaves it to the
bench. Every turn's ref is its `dia_id`; a sample's key is its `sample_id`
(or its place in the file). `loci bench recall` reads its data through this
module, so an imported file and the bench's graph are built by one code path.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from loci.memory.graph.conversation import Turn
from loci.memory.imports.records import Conversation, bad, load_json, when_of

__all__ = ["is_locomo", "read_locomo", "turns_of"]

_SESSION = re.compile(r"^session_(\d+)$")


def is_locomo(data: Any) -> bool:
    """Whether a parsed JSON document is LoCoMo: a list of samples with a `conversation` each."""
    return isinstance(data, list) and bool(data) and all(isinstance(s, dict) and "conversation" in s for s in data)


def turns_of(sample: dict[str, Any], source: str = "LoCoMo", where: str = "sample 1") -> list[Turn]:
    """Every turn of a LoCoMo sample, in order, with its session's number and date."""
    conversation = sample.get("conversation")
    if not isinstance(conversation, dict):
        bad(source, where, "a sample's conversation must be an object")
    sessions = sorted(int(m.group(1)) for key in conversation if (m := _SESSION.match(key)))
    turns = []
    for number in sessions:
        stamp = conversation.get(f"session_{number}_date_time")
        said = when_of(stamp)
        if said is None:
            why = "has no date" if stamp is None else f"has a date this reader does not know: {stamp!r}"
            bad(source, f"{where}, session_{number}", f"missing timestamp: the session {why}")
        rows = conversation[f"session_{number}"] or []
        if not isinstance(rows, list):
            bad(source, f"{where}, session_{number}", "a session must be a list of turns")
        for index, turn in enumerate(rows, start=1):
            if not isinstance(turn, dict):
                bad(source, f"{where}, session_{number} turn {index}", "a turn must be an object")
            turns.append(
                Turn(
                    speaker=str(turn.get("speaker") or ""),
                    text=str(turn.get("text") or ""),
                    ref=str(turn.get("dia_id") or f"S{number}:{index}"),
                    session=str(number),
                    said=said,
                    image=str(turn["blip_caption"]) if turn.get("blip_caption") else None,
                )
            )
    return turns


def read_locomo(text: str, source: str) -> list[Conversation]:
    """One conversation per sample."""
    data = load_json(text, source)
    if isinstance(data, dict) and "conversation" in data:
        data = [data]
    if not is_locomo(data):
        bad(source, "line 1", "not in the LoCoMo format (a list of samples with a conversation each)")
    conversations = []
    for index, sample in enumerate(data, start=1):
        name = str(sample.get("sample_id") or f"{Path(source).stem}:{index}")
        turns = turns_of(sample, source, f"sample {index}")
        conversations.append(Conversation(key=f"locomo:{name}", title=name, turns=turns))
    return conversations
