"""Remembering a conversation: one node per turn, with the structure a transcript already has.

A turn alone is often not the whole fact: "Yes, twice!" answers the turn
before it, and "I went there yesterday" needs the day it was said. So each
turn becomes a `semantic` node whose text is what recall can match:

- the day it was said, the speaker and the words ("[8 May 2023] Caroline: I
  went to a support group yesterday..."), the description of an image shared
  with it, and each relative date resolved against that day ("yesterday = 7
  May 2023", memory/graph/dates.py). The day makes a question's time words match,
  and keeps "Thanks!" said in two sessions two turns, not one node;
- its metadata: the transcript's own id of the turn (`ref`), the speaker,
  the session and its date (ISO), so a caller can map a node back to a turn.

and the turns are linked by what they share (`related` edges, with weights
below the graph's default of 0.5, so that links learned from use outrank
them):

- `next`: consecutive turns of one session, the context a hit brings along,
  stronger when the first turn asks a question (its reply is the answer);
- `entity`: turns that name the same person, place or thing, when only a few
  turns do (a name said in every session links nothing in particular). This
  is how a fact spread over several sessions is reached from one of them.

Each session is also an `episodic` node ("Conversation session 3 on 8 May
2023: ..." with every turn's text), `ground`-linked to its turns: a question
whose words are spread over a session's turns matches the session, which
lifts its turns a little; callers that want turns only recall the
`semantic` kind, and the sessions still lead to them.

Entities are the capitalised words and runs of capitalised words that are not
the first word of a sentence, plus every speaker's name; this is a cheap,
language-agnostic stand-in for named-entity recognition, and it needs no model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from itertools import combinations

from memory.graph.dates import resolve_relative, spoken_date
from memory.graph.graph import Graph, NewNode
from memory.graph.schema import MAX_TEXT_CHARS

__all__ = [
    "ENTITY_WEIGHT",
    "MAX_ENTITY_TURNS",
    "NEXT_WEIGHT",
    "REPLY_WEIGHT",
    "Turn",
    "entities_of",
    "remember_conversation",
    "turn_text",
]

NEXT_WEIGHT = 0.4
REPLY_WEIGHT = 0.6
ENTITY_WEIGHT = 0.25
SESSION_WEIGHT = 0.2
MAX_ENTITY_TURNS = 6
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][\w'-]+(?: [A-Z][\w'-]+)*)")


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation: who said what, in which session, on which day."""

    speaker: str
    text: str
    ref: str = ""
    session: str = ""
    said: date | None = None
    image: str | None = None


def turn_text(turn: Turn) -> str:
    """The text a turn is remembered (and matched) by."""
    text = f"{turn.speaker}: {turn.text}".strip() if turn.speaker else turn.text.strip()
    if turn.image:
        text += f" [shares an image: {turn.image}]"
    resolved = resolve_relative(turn.text, turn.said) if turn.said else []
    if resolved:
        text += " (" + "; ".join(f"{expression} = {when}" for expression, when in resolved) + ")"
    if turn.said:
        text = f"[{spoken_date(turn.said)}] {text}"
    return text


def entities_of(text: str) -> set[str]:
    """The capitalised names in `text` that do not start a sentence, case-folded."""
    return {name.casefold() for name in _NAME.findall(text) if len(name) > 1}


async def remember_conversation(graph: Graph, turns: Sequence[Turn], cause: str | None = None) -> list[int | None]:
    """Remember every turn (one transaction) and link them; the node id of each turn, None for an empty one."""
    kept = [i for i, turn in enumerate(turns) if turn.text.strip() or turn.image]
    items = [_node(turns[i]) for i in kept]
    results = await graph.add_many(items, cause=cause) if items else []
    ids: list[int | None] = [None] * len(turns)
    for i, (node_id, _) in zip(kept, results, strict=True):
        ids[i] = node_id
    speakers = {turn.speaker.casefold() for turn in turns if turn.speaker}
    edges = _next_edges(turns, ids) + _entity_edges(turns, ids, speakers)
    edges += await _session_edges(graph, turns, ids, cause)
    if edges:
        await graph.link_many(edges, cause=cause)
    return ids


def _node(turn: Turn) -> NewNode:
    meta = {"ref": turn.ref, "speaker": turn.speaker, "session": turn.session}
    if turn.said:
        meta["date"] = turn.said.isoformat()
        meta["spoken_date"] = spoken_date(turn.said)
    return NewNode(turn_text(turn), meta=meta)


def _next_edges(turns: Sequence[Turn], ids: list[int | None]) -> list[tuple[int, int, str, float]]:
    edges = []
    previous: tuple[str, int, str] | None = None
    for turn, node_id in zip(turns, ids, strict=True):
        if node_id is None:
            continue
        if previous and previous[0] == turn.session and previous[1] != node_id:
            edges.append((previous[1], node_id, "related", REPLY_WEIGHT if "?" in previous[2] else NEXT_WEIGHT))
        previous = (turn.session, node_id, turn.text)
    return edges


def _entity_edges(
    turns: Sequence[Turn], ids: list[int | None], speakers: set[str]
) -> list[tuple[int, int, str, float]]:
    """Links between the few turns that name one entity (speakers count only when named in the text)."""
    mentions: dict[str, set[int]] = {}
    for turn, node_id in zip(turns, ids, strict=True):
        if node_id is None:
            continue
        names = entities_of(turn.text) | {
            s for s in speakers if re.search(rf"\b{re.escape(s)}\b", turn.text.casefold())
        }
        for name in names:
            mentions.setdefault(name, set()).add(node_id)
    pairs: set[tuple[int, int]] = set()
    for nodes in mentions.values():
        if 2 <= len(nodes) <= MAX_ENTITY_TURNS:
            pairs.update(combinations(sorted(nodes), 2))
    return [(a, b, "related", ENTITY_WEIGHT) for a, b in sorted(pairs)]


async def _session_edges(
    graph: Graph, turns: Sequence[Turn], ids: list[int | None], cause: str | None
) -> list[tuple[int, int, str, float]]:
    """Remember each session as an episode holding its turns' text, and link it to them."""
    members: dict[str, list[tuple[Turn, int]]] = {}
    for turn, node_id in zip(turns, ids, strict=True):
        if node_id is not None:
            members.setdefault(turn.session, []).append((turn, node_id))
    items = []
    for session, held in members.items():
        said = held[0][0].said
        head = f"Conversation session {session}" + (f" on {spoken_date(said)}" if said else "")
        text = f"{head}: " + " ".join(turn_text(turn) for turn, _ in held)
        items.append(NewNode(text[:MAX_TEXT_CHARS], kind="episodic", meta={"session": session}))
    results = await graph.add_many(items, cause=cause) if items else []
    return [
        (session_id, node_id, "ground", SESSION_WEIGHT)
        for (session_id, _), held in zip(results, members.values(), strict=True)
        for _, node_id in held
    ]
