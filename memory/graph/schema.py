"""The memory graph's tables (the records and identity rules are in memory/graph/records.py).

`memory_nodes` holds facts, episodes and procedures; a live unnamed node is
unique by its content hash, a live named node by its name, within its
project. Edges are typed (`ground`: a fact used in an episode, `distill`: the
episode a procedure came from, `related`: co-activation, similarity or a
named relation whose type is the edge's `label`) and weighted. One live edge
per (src, dst, kind, label).

Nothing is ever deleted: forgetting sets `deleted`, and every change is
appended to `memory_events` with its before and after values and its cause.
`memory_fts` (BM25) indexes the live nodes only, so recall never sees a
forgotten node; a long node is indexed in pieces, each a row of
`memory_pieces` (its node and character span; memory/graph/pieces.py).
`memory_names` is a trigram index of entity names, entity types and
observations, for the substring search the reference server does.
"""

from __future__ import annotations

import sqlite_utils
from sqlite_utils import Migrations

__all__ = ["MIGRATIONS"]

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


@MIGRATIONS()
def add_projects(db: sqlite_utils.Database) -> None:
    """Every node belongs to a project; the nodes of a home made before projects are in `default`.

    Identity is per project: the same fact remembered in two projects is two
    nodes, so forgetting it in one leaves the other."""
    db.execute("ALTER TABLE memory_nodes ADD COLUMN project TEXT NOT NULL DEFAULT 'default'")
    db.execute("DROP INDEX memory_nodes_hash")
    db.execute("DROP INDEX memory_nodes_name")
    db.execute(
        "CREATE UNIQUE INDEX memory_nodes_hash ON memory_nodes(project, hash) WHERE deleted IS NULL AND name IS NULL"
    )
    db.execute(
        "CREATE UNIQUE INDEX memory_nodes_name ON memory_nodes(project, name)"
        " WHERE deleted IS NULL AND name IS NOT NULL"
    )
    # Listings of one project (export, the UI's top nodes, procedures) read it in id order.
    db.execute("CREATE INDEX memory_nodes_project ON memory_nodes(project, kind, id) WHERE deleted IS NULL")


@MIGRATIONS()
def add_pieces(db: sqlite_utils.Database) -> None:
    """A node longer than `LONG_CHARS` is indexed in pieces: each piece's node and character span.

    Its rows in `memory_fts` are keyed by minus the piece's id, so they never meet a node's id.
    Every node stored before is short enough to stay indexed whole."""
    db.execute(
        "CREATE TABLE memory_pieces ("
        " id INTEGER PRIMARY KEY, node INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL)"
    )
    db.execute("CREATE INDEX memory_pieces_node ON memory_pieces(node)")
