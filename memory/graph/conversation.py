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
  is how a fact spread over several sessions is reached from one of them;
- `rule`: a standing instruction of the person ("Always include version
  numbers when I ask about libraries") and every turn of theirs on its topic
  (the words after "when I ask about"), the weight of `MAX_ENTITY_TURNS` entity
  links shared among them. A later question on the topic matches those turns,
  not the instruction, whose words are few and common in the conversation;
  the links bring the instruction along. A heavier share lifts the
  instruction into questions it does not answer. What the links gain and how
  the share was chosen: docs/benchmarks.md, "Figures behind the code's choices".

A `next` or `entity` link is as strong as its two turns are each other's context: fully between
chat lines ("Yes, twice!"), less as the longer turn grows past
`CONTEXT_CHARS`, since a long message carries its own context (between long
messages, full-weight links ranked below no graph at all).

Each session is also an `episodic` node ("Conversation session 3 on 8 May
2023: ..." with every turn's text, indexed in pieces when long), `ground`-linked to its turns: a question
whose words are spread over a session's turns matches the session, which
lifts its turns a little; callers that want turns only recall the
`semantic` kind, and the sessions still lead to them.

Entities are the capitalised words and runs of capitalised words that are not
the first word of a sentence, plus every speaker's name; this is a cheap,
language-agnostic stand-in for named-entity recognition, and it needs no model.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from itertools import combinations

from loci.memory.errors import UsageError
from loci.memory.graph.dates import resolve_relative, spoken_date
from loci.memory.graph.graph import Graph
from loci.memory.graph.ops import NewNode, fetch_nodes, insert_edges, insert_nodes, update_node
from loci.memory.graph.ranking import ASSISTANT_SPEAKERS
from loci.memory.graph.records import MAX_TEXT_CHARS
from loci.memory.graph.terms import query_terms
from loci.memory.projects import writable_project

__all__ = [
    "ENTITY_WEIGHT",
    "MAX_ENTITY_TURNS",
    "NEXT_WEIGHT",
    "REPLY_WEIGHT",
    "Turn",
    "Written",
    "entities_of",
    "remember_conversation",
    "turn_text",
    "write_conversation",
]

NEXT_WEIGHT = 0.4
REPLY_WEIGHT = 0.6
ENTITY_WEIGHT = 0.25
SESSION_WEIGHT = 0.2
MAX_ENTITY_TURNS = 6
CONTEXT_CHARS = 1_000
# A standing instruction of the person: "Always include version numbers when I ask about libraries."
_RULE = re.compile(r"^\s*(?:always|never|from now on|whenever)\b", re.IGNORECASE)
_RULE_TOPIC = re.compile(
    r"\bwhen(?:ever)? I (?:ask|talk)(?: you)?(?: about)?\b(?P<topic>.*)", re.IGNORECASE | re.DOTALL
)
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


@dataclass(frozen=True)
class Written:
    """What `write_conversation` stored: each turn's node id (None for an empty or skipped turn), the session
    nodes by session, the `(id, text)` of the nodes it created or changed (for an embedder), and the
    `(ref, reason)` of each turn it could not store (over `MAX_TEXT_CHARS`): that turn only is left out."""

    ids: list[int | None]
    sessions: dict[str, int]
    fresh: list[tuple[int, str]]
    skipped: list[tuple[str, str]] = field(default_factory=list)


async def remember_conversation(graph: Graph, turns: Sequence[Turn], cause: str | None = None) -> list[int | None]:
    """Remember every turn and link them, in one transaction; the node id of each turn, None for an empty one."""
    project = writable_project(graph.project)
    written = await graph.store.write(lambda db: write_conversation(db.conn, turns, cause=cause, project=project))
    await graph.embed(written.fresh)
    return written.ids


def write_conversation(
    conn: sqlite3.Connection,
    turns: Sequence[Turn],
    known: dict[int, int] | None = None,
    sessions: dict[str, int] | None = None,
    cause: str | None = None,
    *,
    project: str,
) -> Written:
    """Store `turns` in `project` inside the caller's transaction.

    `known` maps the index of a turn stored before to its node, and `sessions` a session to its node: only
    the other turns are added, the edges that touch them, and their sessions' nodes are written anew (a longer
    version of a conversation adds its new turns and nothing else). With neither, every turn is new."""
    known = _live(conn, known or {}, project)
    sessions = _live_sessions(conn, sessions or {}, project)
    new, items, skipped = [], [], []
    for i, turn in enumerate(turns):
        if i in known or not (turn.text.strip() or turn.image):
            continue
        try:
            items.append(_checked(turn))
        except UsageError as exc:
            skipped.append((turn.ref, str(exc)))
            continue
        new.append(i)
    results = insert_nodes(conn, items, cause, project=project)
    ids: list[int | None] = [known.get(i) for i in range(len(turns))]
    for i, (node_id, _) in zip(new, results, strict=True):
        ids[i] = node_id
    fresh = [(node_id, turn_text(turns[i])) for i, (node_id, created) in zip(new, results, strict=True) if created]
    touched = {ids[i] for i in new}
    speakers = {turn.speaker.casefold() for turn in turns if turn.speaker}
    edges = _next_edges(turns, ids) + _entity_edges(turns, ids, speakers) + _rule_edges(turns, ids)
    edges = [edge for edge in edges if edge[0] in touched or edge[1] in touched]
    wanted = {turns[i].session for i in new}
    stored, session_edges, changed = _write_sessions(conn, turns, ids, wanted, sessions, cause, project)
    edges += session_edges
    if edges:
        insert_edges(conn, edges, cause, project)
    return Written(ids, {**sessions, **stored}, fresh + changed, skipped)


def _live(conn: sqlite3.Connection, known: dict[int, int], project: str) -> dict[int, int]:
    """The known turns whose node is still live (a forgotten one is remembered again)."""
    live = fetch_nodes(conn, known.values(), project)
    return {i: node_id for i, node_id in known.items() if node_id in live}


def _live_sessions(conn: sqlite3.Connection, sessions: dict[str, int], project: str) -> dict[str, int]:
    live = fetch_nodes(conn, sessions.values(), project)
    return {session: node_id for session, node_id in sessions.items() if node_id in live}


def _checked(turn: Turn) -> NewNode:
    try:
        return _node(turn).checked()
    except UsageError as exc:
        raise UsageError(f"turn {turn.ref or turn_text(turn)[:40]!r}: {exc}") from exc


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
            weight = (REPLY_WEIGHT if "?" in previous[2] else NEXT_WEIGHT) * _context(previous[2], turn.text)
            edges.append((previous[1], node_id, "related", round(weight, 4)))
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
    size = {node_id: len(turn.text) for turn, node_id in zip(turns, ids, strict=True) if node_id is not None}
    return [(a, b, "related", round(ENTITY_WEIGHT * _context_of(size[a], size[b]), 4)) for a, b in sorted(pairs)]


def _rule_edges(turns: Sequence[Turn], ids: list[int | None]) -> list[tuple[int, int, str, float]]:
    """Links from each standing instruction of a person ("Always include version numbers when I ask about
    libraries") to every turn of theirs on its topic (holding two of its words, or its one), which share
    the weight of `MAX_ENTITY_TURNS` entity links between them: an instruction that applies to many turns
    is no closer to any one of them."""
    rules = [(i, _rule_topic(turn)) for i, turn in enumerate(turns) if ids[i] is not None]
    rules = [(i, words) for i, words in rules if words]
    if not rules:
        return []
    folded = [turn.text.casefold() for turn in turns]
    edges = []
    for i, words in rules:
        needed = min(2, len(words))
        held = [
            node_id
            for j, (other, node_id) in enumerate(zip(turns, ids, strict=True))
            if node_id is not None
            and node_id != ids[i]
            and other.speaker == turns[i].speaker
            and sum(1 for word in words if word.search(folded[j])) >= needed
        ]
        weight = round(ENTITY_WEIGHT * min(1.0, MAX_ENTITY_TURNS / max(1, len(held))), 4)
        edges += [(ids[i], node_id, "related", weight) for node_id in held]
    return edges


def _rule_topic(turn: Turn) -> list[re.Pattern[str]]:
    """The words of a standing instruction's topic (each matched by its first letters at a word's start), or
    none when the turn is no instruction of the person's."""
    if turn.speaker.casefold() in ASSISTANT_SPEAKERS or not _RULE.match(turn.text):
        return []
    topic = _RULE_TOPIC.search(turn.text)
    terms = query_terms(topic["topic"]) if topic else []
    return [re.compile(rf"\b{re.escape(t[: max(4, len(t) - 2)])}") for t in terms]


def _context(first: str, second: str) -> float:
    return _context_of(len(first), len(second))


def _context_of(first: int, second: int) -> float:
    """How much two linked turns are each other's context: fully when both are short, as chat lines are; less
    as the longer grows past `CONTEXT_CHARS`, since a long message carries its own context."""
    return min(1.0, CONTEXT_CHARS / max(first, second, 1))


def _write_sessions(
    conn: sqlite3.Connection,
    turns: Sequence[Turn],
    ids: list[int | None],
    wanted: set[str],
    sessions: dict[str, int],
    cause: str | None,
    project: str,
) -> tuple[dict[str, int], list[tuple[int, int, str, float]], list[tuple[int, str]]]:
    """Remember each wanted session as an episode holding its turns' text (rewriting a stored one), and link
    it to them; `(session nodes, edges, changed nodes)`."""
    members: dict[str, list[tuple[Turn, int]]] = {}
    for turn, node_id in zip(turns, ids, strict=True):
        if node_id is not None and turn.session in wanted:
            members.setdefault(turn.session, []).append((turn, node_id))
    texts = {session: _session_text(session, held) for session, held in members.items()}
    changed = []
    for session in [s for s in members if s in sessions]:
        node_id = sessions[session]
        if conn.execute("SELECT text FROM memory_nodes WHERE id = ?", [node_id]).fetchone()[0] != texts[session]:
            update_node(conn, node_id, texts[session], cause)
            changed.append((node_id, texts[session]))
    added = [s for s in members if s not in sessions]
    items = [NewNode(texts[s], kind="episodic", meta={"session": s}) for s in added]
    results = insert_nodes(conn, items, cause, project=project) if items else []
    stored = {
        **{s: sessions[s] for s in members if s in sessions},
        **{s: r[0] for s, r in zip(added, results, strict=True)},
    }
    changed += [(r[0], texts[s]) for s, r in zip(added, results, strict=True) if r[1]]
    edges = [
        (stored[s], node_id, "ground", round(SESSION_WEIGHT * _context_of(len(turn.text), 0), 4))
        for s, held in members.items()
        for turn, node_id in held
    ]
    return stored, edges, changed


def _session_text(session: str, held: list[tuple[Turn, int]]) -> str:
    said = held[0][0].said
    head = f"Conversation session {session}" + (f" on {spoken_date(said)}" if said else "")
    text = f"{head}: " + " ".join(turn_text(turn) for turn, _ in held)
    # Past the limit, the episode holds the head of its session; every turn is still a node of its own.
    return text[:MAX_TEXT_CHARS]
