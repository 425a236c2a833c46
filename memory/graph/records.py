"""The memory graph's records and identity rules, with no database library in them.

Nodes are facts (`semantic`), runs (`episodic`) and recipes (`procedural`).
A node is identified by its content: the hash of its kind and normalised text
(Unicode NFKC, case-folded, whitespace collapsed), unique among live unnamed
nodes of a project, so remembering a fact twice finds the first copy. A node
may instead carry a `name` (the entities of the reference memory server do),
unique among live nodes of a project; a named node is identified by its name,
not its text. The tables are in memory/graph/schema.py; this module imports
only the standard library, so the hook process (memory/hooks/) that reads the
graph starts without sqlite-utils.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from loci.memory.errors import NotFoundError, UsageError

__all__ = [
    "EDGE_COLUMNS",
    "EDGE_KINDS",
    "EdgeKind",
    "MAX_LABEL_CHARS",
    "MAX_META_CHARS",
    "MAX_NOTE_CHARS",
    "MAX_TEXT_CHARS",
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
    "node_refs",
    "normalise",
    "parse_node_id",
]

# The kinds, once: the Literals type the tools (and so their MCP schemas), the tuples check input.
# The tables' CHECK constraints spell them out too: a new kind is a new migration.
NodeKind = Literal["semantic", "episodic", "procedural"]
EdgeKind = Literal["ground", "distill", "related"]
NODE_KINDS: tuple[str, ...] = get_args(NodeKind)
EDGE_KINDS: tuple[str, ...] = get_args(EdgeKind)
# A node's text is kept whole up to ten million characters (a long one is indexed in pieces,
# memory/graph/pieces.py); past that it is refused, and an import skips that one item, saying why.
MAX_TEXT_CHARS = 10_000_000
MAX_META_CHARS = 16_000
# A note on feedback is a remark, not a document.
MAX_NOTE_CHARS = 16_000
# A type or a label names a kind of thing ("person", "works_at"): a line, not a document.
MAX_LABEL_CHARS = 200
MAX_SQLITE_INT = 2**63 - 1
_NODE_REF = re.compile(r"\bmem:(\d+)\b")


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
    project: str = "default"

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


# `project` comes last: memory/graph/ops.py reads it as a row's last value.
NODE_COLUMNS = (
    "id, kind, text, name, meta, created, updated, deleted, uses, last_used, successes, failures, status, project"
)
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


def normalise(text: str) -> str:
    """The form two texts share when they say the same thing: NFKC, case-folded, spaces collapsed."""
    # str.split() splits at exactly the characters `\s` matches (str.isspace) and drops them at both ends.
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def content_hash(kind: str, text: str) -> str:
    return hashlib.sha256(f"{kind}\0{normalise(text)}".encode()).hexdigest()[:32]


def check_text(text: object, what: str = "text") -> str:
    """The text itself, or a clear `UsageError` for empty, non-string or too-long text."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError(f"the {what} is empty; give the fact, episode or procedure as text")
    if len(text) > MAX_TEXT_CHARS:
        raise UsageError(
            f"the {what} has {len(text):,} characters, over the limit of {MAX_TEXT_CHARS:,};"
            " split it into smaller parts"
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


def node_refs(text: str) -> list[int]:
    """The memory ids (`mem:N`) named in a text, in order, once each."""
    return list(dict.fromkeys(int(m) for m in _NODE_REF.findall(text)))


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
