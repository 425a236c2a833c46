"""Writing a conversation read from a file: one transaction each, only what the ledger has not seen.

`import_conversation` looks up which of the conversation's turns, sessions
and tool records were imported before (memory/imports/ledger.py), stores the
rest with the structure `loci bench recall` measures
(memory/graph/conversation.py `write_conversation`: a node per turn, next-turn
and entity edges, an episode per session, rewritten when its session grew),
keeps the new tool records as one `obs` context object, and records them
all in the ledger, in one `BEGIN IMMEDIATE` transaction: a failure leaves
nothing half-written, and importing the same file again adds nothing. A turn
too long to store (over `MAX_TEXT_CHARS`, memory/graph/records.py) is
skipped alone and reported with its reason (`Imported.skipped`); it is not
recorded, so every import says so again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlite_utils

from loci.memory.context.store import ContextStore
from loci.memory.graph.conversation import write_conversation
from loci.memory.graph.graph import Graph
from loci.memory.imports.ledger import SESSION, imported, record
from loci.memory.imports.records import Conversation
from loci.memory.projects import writable_project

__all__ = ["Imported", "import_conversation"]


@dataclass(frozen=True)
class Imported:
    """What one conversation's import did: new turns, turns already there, each turn's node, the tools' object,
    and the `(ref, reason)` of each turn skipped."""

    key: str
    title: str
    added: int
    already: int
    nodes: list[int | None]
    tools: str | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)


async def import_conversation(
    graph: Graph, conversation: Conversation, contexts: ContextStore | None = None, cause: str = "import"
) -> Imported:
    """Store what is new in `conversation`; tool records go to `contexts` (dropped without one)."""
    key = conversation.key
    project = writable_project(graph.project)

    def write(db: sqlite_utils.Database) -> tuple[Imported, list[tuple[int, str]]]:
        conn = db.conn
        seen = imported(conn, key, project)
        turns = conversation.turns
        known = {i: seen[t.ref] for i, t in enumerate(turns) if t.ref in seen and seen[t.ref] is not None}
        sessions = {ref[len(SESSION) :]: node for ref, node in seen.items() if ref.startswith(SESSION) and node}
        written = write_conversation(conn, turns, known, sessions, cause=cause, project=project)
        left_out = {ref for ref, _ in written.skipped}
        rows = [
            (t.ref, node, None)
            for t, node in zip(turns, written.ids, strict=True)
            if t.ref not in seen and t.ref not in left_out
        ]
        rows += [(SESSION + session, node, None) for session, node in written.sessions.items()]
        new_tools = [tool for tool in conversation.tools if tool.ref not in seen]
        obj = None
        if new_tools and contexts is not None:
            text = "\n\n".join(tool.text for tool in new_tools)
            meta = {"conversation": key, **conversation.meta}
            obj = contexts.add_text_now(conn, "obs", f"{conversation.title}: tool calls and results", text, meta)
            rows += [(tool.ref, None, obj) for tool in new_tools]
        record(conn, key, rows, project)
        added = sum(1 for t in turns if t.ref not in seen and t.ref not in left_out)
        already = len(turns) - added - len(left_out)
        done = Imported(key, conversation.title, added, already, written.ids, obj, written.skipped)
        return done, written.fresh

    result, fresh = await graph.store.write(write)
    await graph.embed(fresh)
    return result
