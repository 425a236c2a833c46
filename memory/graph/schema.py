"""The memory graph's tables, records and identity rules.

Nodes are facts (`semantic`), runs (`episodic`) and recipes (`procedural`).
A node is identified by its content: the hash of its kind and normalised text
(Unicode NFKC, case-folded, whitespace collapsed), unique among live unnamed
nodes, so remembering a fact twice finds the first copy. A node may instead
carry a `name` (the entities of the reference memory server do), unique among
live nodes; a named node is identified by its name, not its text.

Edges are typed (`ground`: a fact used in an episode, `distill`: the episode a
procedure came from, `related`: co-activation, similarity or a named relation
whose type is the edge's `label`) and weighted. One live edge per
(src, dst, kind, label).

Nothing is ever deleted: forgetting sets `deleted`, and every change is
appended to `memory_events` with its before and after values and its cause.
`memory_fts` (BM25) indexes the live nodes only, so recall never sees a
forgotten node. `memory_names` is a trigram index of entity names, entity
types and observations, for the substring search the reference server does.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import sqlite_utils
from sqlite_utils import Migrations

from memory.errors import NotFoundError, UsageError

__all__ = [
    "EDGE_COLUMNS",
    "EDGE_KINDS",
    "EdgeKind",
    "MAX_LABEL_CHARS",
    "MAX_META_CHARS",
    "MAX_TEXT_CHARS",
    "MIGRATIONS",
    "NODE_COLUMNS",
    "NODE_KINDS",
    "NodeKind",
    "Edge",
    "Node",
    "check_edge_kind",
    "check_kinds",
    "check_label",
    "check_meta",
    "check_text",
    "content_hash",
    "edge_from_row",
    "node_from_row",
    "node_ref",
    "normalise",
    "parse_node_id",
]

# The kinds, once: the Literals type the tools (and so their MCP schemas), the tuples check input.
# The tables' CHECK constraints spell them out too: a new kind is a new migration.
NodeKind = Literal["semantic", "episodic", "procedural"]
EdgeKind = Literal["ground", "distill", "related"]
NODE_KINDS: tuple[str, ...] = get_args(NodeKind)
EDGE_KINDS: tuple[str, ...] = get_args(EdgeKind)
MAX_TEXT_CHARS = 16_000
MAX_META_CHARS = 16_000
# A type or a label names a kind of thing ("person", "works_at"): a line, not a document.
MAX_LABEL_CHARS = 200
MAX_SQLITE_INT = 2**63 - 1

MIGRATIONS = Migrations("graph")


@MIGRATIONS()
def create_graph_tables(db: sqlite_utils.Database) -> None:
    db.execute(
        "CREATE TABLE memory_nodes ("
        " id INTEGER PRIMARY KEY,"
        " kind TEXT NOT NULL CHECK (kind IN ('semantic', 'episodic', 'procedural')),"
        " text TEXT NOT NULL, name TEXT, hash TEXT NOT NULL, meta TEXT NOT NULL DEFAULT '{}',"
        " created REAL NOT NULL, updated REAL NOT NULL, deleted REAL,"
        " uses INTEGER NOT NULL DEFAULT 0, last_used REAL,"
        " successes INTEGER NOT NULL DEFAULT 0, failures INTEGER NOT NULL DEFAULT 0, status TEXT)"
    )
    db.execute("CREATE UNIQUE INDEX memory_nodes_hash ON memory_nodes(hash) WHERE deleted IS NULL AND name IS NULL")
    db.execute("CREATE UNIQUE INDEX memory_nodes_name ON memory_nodes(name) WHERE deleted IS NULL AND name IS NOT NULL")
    db.execute(
        "CREATE TABLE memory_edges ("
        " id INTEGER PRIMARY KEY,"
        " src INTEGER NOT NULL REFERENCES memory_nodes(id), dst INTEGER NOT NULL REFERENCES memory_nodes(id),"
        " kind TEXT NOT NULL CHECK (kind IN ('ground', 'distill', 'related')), label TEXT NOT NULL DEFAULT '',"
        " weight REAL NOT NULL DEFAULT 0.5, uses INTEGER NOT NULL DEFAULT 0,"
        " co_success INTEGER NOT NULL DEFAULT 0, co_failure INTEGER NOT NULL DEFAULT 0, meta TEXT,"
        " created REAL NOT NULL, updated REAL NOT NULL, last_used REAL, deleted REAL)"
    )
    # The key index leads with src, so it is also the index for outgoing edges.
    db.execute("CREATE UNIQUE INDEX memory_edges_key ON memory_edges(src, dst, kind, label) WHERE deleted IS NULL")
    db.execute("CREATE INDEX memory_edges_dst ON memory_edges(dst) WHERE deleted IS NULL")
    db.execute(
        "CREATE TABLE memory_events ("
        " id INTEGER PRIMARY KEY, at REAL NOT NULL, op TEXT NOT NULL,"
        " node INTEGER, edge INTEGER, before TEXT, after TEXT, cause TEXT)"
    )
    db.execute("CREATE INDEX memory_events_node ON memory_events(node)")
    db.execute(
        "CREATE VIRTUAL TABLE memory_fts USING fts5("
        " text, content='memory_nodes', content_rowid='id', tokenize='porter unicode61')"
    )
    db.execute(
        "CREATE TABLE memory_vectors ("
        " id INTEGER PRIMARY KEY, node INTEGER NOT NULL UNIQUE REFERENCES memory_nodes(id),"
        " dim INTEGER NOT NULL, vector BLOB NOT NULL)"
    )
    db.execute("CREATE VIRTUAL TABLE memory_names USING fts5(name, type, observation, tokenize='trigram')")
    # Document frequency per term, read by recall to leave out terms too common to rank by.
    db.execute("CREATE VIRTUAL TABLE memory_vocab USING fts5vocab(memory_fts, row)")


@dataclass(frozen=True)
class Node:
    id: int
    kind: str
    text: str
    name: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    created: float = 0.0
    updated: float = 0.0
    deleted: float | None = None
    uses: int = 0
    last_used: float | None = None
    successes: int = 0
    failures: int = 0
    status: str | None = None

    @property
    def ref(self) -> str:
        return node_ref(self.id)


@dataclass(frozen=True)
class Edge:
    id: int
    src: int
    dst: int
    kind: str
    label: str = ""
    weight: float = 0.5
    uses: int = 0
    co_success: int = 0
    co_failure: int = 0
    meta: dict[str, Any] | None = None
    created: float = 0.0
    updated: float = 0.0
    last_used: float | None = None


NODE_COLUMNS = "id, kind, text, name, meta, created, updated, deleted, uses, last_used, successes, failures, status"
EDGE_COLUMNS = "id, src, dst, kind, label, weight, uses, co_success, co_failure, meta, created, updated, last_used"


def node_from_row(row: tuple[Any, ...]) -> Node:
    """A `Node` from a row selected with `NODE_COLUMNS`."""
    values = list(row)
    values[4] = json.loads(values[4] or "{}")
    return Node(*values)


def edge_from_row(row: tuple[Any, ...]) -> Edge:
    """An `Edge` from a row selected with `EDGE_COLUMNS`."""
    values = list(row)
    values[9] = json.loads(values[9]) if values[9] else None
    return Edge(*values)


_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """The form two texts share when they say the same thing: NFKC, case-folded, spaces collapsed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def content_hash(kind: str, text: str) -> str:
    return hashlib.sha256(f"{kind}\0{normalise(text)}".encode()).hexdigest()[:32]


def check_text(text: object, what: str = "text") -> str:
    """The text itself, or a clear `UsageError` for empty, non-string or too-long text."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError(f"the {what} is empty; give the fact, episode or procedure as text")
    if len(text) > MAX_TEXT_CHARS:
        raise UsageError(
            f"the {what} has {len(text):,} characters, over the limit of {MAX_TEXT_CHARS:,};"
            " split it into smaller facts"
        )
    return text


def check_label(label: object, what: str = "label") -> str:
    """The label itself (it may be empty), or a clear `UsageError` when it is not text or over the limit."""
    if not isinstance(label, str):
        raise UsageError(f"the {what} must be text")
    if len(label) > MAX_LABEL_CHARS:
        raise UsageError(f"the {what} has {len(label):,} characters, over the limit of {MAX_LABEL_CHARS:,}")
    return label


def check_meta(meta: object) -> None:
    """A clear `UsageError` for metadata that is not a JSON object or is over the size limit."""
    if meta is None:
        return
    if not isinstance(meta, dict):
        raise UsageError("metadata is a JSON object of keys and values")
    try:
        size = len(json.dumps(meta, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"metadata must be plain JSON: {exc}") from exc
    if size > MAX_META_CHARS:
        raise UsageError(f"the metadata has {size:,} characters as JSON, over the limit of {MAX_META_CHARS:,}")


def check_kinds(
    kinds: str | Iterable[str] | None, allowed: tuple[str, ...] = NODE_KINDS, what: str = "node kind"
) -> list[str]:
    names = [kinds] if isinstance(kinds, str) else list(kinds or [])
    for kind in names:
        if kind not in allowed:
            raise UsageError(f"unknown {what} {kind!r}; expected one of {', '.join(allowed)}")
    return names


def check_edge_kind(kind: str) -> str:
    return check_kinds(kind, EDGE_KINDS, "edge kind")[0]


def node_ref(node_id: int) -> str:
    """The id a person or a model sees: `mem:42`."""
    return f"mem:{node_id}"


def parse_node_id(ref: object) -> int:
    """`mem:42`, `42` or 42 as the integer 42; a clear `NotFoundError` for anything else.

    A number past SQLite's integer range names no memory (it could never have been stored)."""
    if isinstance(ref, bool):
        ref = str(ref)
    if isinstance(ref, int):
        number = ref
    else:
        text = str(ref).strip()
        digits = text[4:] if text.startswith("mem:") else text
        if not (digits.isascii() and digits.isdigit()):
            raise NotFoundError(f"{_shown(ref)} is not a memory id; memory ids look like mem:42")
        number = int(digits)
    if not 0 <= number <= MAX_SQLITE_INT:
        raise NotFoundError(f"no memory {node_ref(number) if number >= 0 else number}")
    return number


def _shown(ref: object, limit: int = 40) -> str:
    text = repr(ref)
    return text if len(text) <= limit else text[: limit - 3] + "..."
