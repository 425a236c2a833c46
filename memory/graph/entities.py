"""Entities, observations and relations: the reference memory server's model, on the graph.

The reference MCP memory server (`@modelcontextprotocol/server-memory`)
keeps entities (a unique name, a type, a list of observations) and directed
relations between entity names, in a JSONL file it rewrites on every call.
Here the same model lives in the memory graph, so an agent using either tool
set sees one memory:

- an entity is a named semantic node (`name` = entity name, text = name,
  `meta.entityType`);
- an observation is an ordinary semantic fact node, linked from its entity
  by a `related` edge labelled `observation` (a fact shared by two entities
  is one node with two edges); the exact string the client gave is kept on
  the edge when it differs from the stored fact;
- a relation is a `related` edge between two entities, labelled with its
  relation type. A relation may name an entity that does not exist yet, as
  the reference allows: it gets a placeholder node, which becomes a real
  entity when it is created.

`memory_names` (a trigram FTS5 index) gives the reference's case-insensitive
substring search over names, types and observations without a scan, and its
BM25 score ranks the entities found through an observation (it is asked of
observation rows only: asked at all, it counts the phrase's rows over the
whole index first). Results keep the reference's shapes and order
(creation order), except search, which is ranked: exact name first.

A call's writes (create, relate, observe: one transaction each, their size
bounded by the call) run on the event loop's thread when the writer is free
(`write_bounded`), as a search's read does (`read_bounded`): on a busy
machine a worker thread's two switches cost more than the transaction's body.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import sqlite_utils

from loci.memory.context.fulltext import fts_phrase
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError
from loci.memory.graph.entities_ops import (
    CAUSE,
    OBSERVATION,
    add_observation,
    create_entities,
    create_relations,
    entities_of_facts,
    entity_ids,
    forget_if_orphan,
    graph_of,
    observation_edges,
)
from loci.memory.graph.ops import forget_node, unlink_edge
from loci.memory.projects import DEFAULT_PROJECT, check_project

__all__ = ["EntityGraph"]


class EntityGraph:
    """The reference server's operations over one project of a `Store`; every call is one transaction."""

    def __init__(self, store: Store, *, project: str = DEFAULT_PROJECT) -> None:
        self.store = store
        self.project = check_project(project)

    async def create_entities(self, entities: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Create the entities whose names are new; returns those, as given."""

        return await self.store.write_bounded(lambda db: create_entities(db.conn, entities, self.project))

    async def create_relations(self, relations: Sequence[dict[str, str]]) -> list[dict[str, str]]:
        """Create the relations that are new; returns those, as given."""

        return await self.store.write_bounded(lambda db: create_relations(db.conn, relations, self.project))

    async def add_observations(self, observations: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Add observations to existing entities; fails (and adds nothing) if one does not exist."""

        def write(db: sqlite_utils.Database) -> list[dict[str, Any]]:
            conn, results = db.conn, []
            for item in observations:
                node_id = entity_ids(conn, [item["entityName"]], self.project).get(item["entityName"])
                if node_id is None:
                    raise NotFoundError(f"Entity with name {item['entityName']} not found")
                added = [text for text in item["contents"] if add_observation(conn, node_id, text, self.project)]
                results.append({"entityName": item["entityName"], "addedObservations": added})
            return results

        return await self.store.write_bounded(write)

    async def delete_entities(self, names: Sequence[str]) -> None:
        """Forget the entities and their relations and observations; unknown names are ignored."""

        def write(db: sqlite_utils.Database) -> None:
            conn = db.conn
            ids = entity_ids(conn, names, self.project, placeholders=True)
            for node_id in ids.values():
                facts = [fact for _, _, fact, _ in observation_edges(conn, [node_id])]
                forget_node(conn, node_id, cause=CAUSE)
                for fact in facts:
                    forget_if_orphan(conn, fact)

        await self.store.write(write)

    async def delete_observations(self, deletions: Sequence[dict[str, Any]]) -> None:
        """Remove observations from entities; unknown entities or observations are ignored."""

        def write(db: sqlite_utils.Database) -> None:
            conn = db.conn
            for item in deletions:
                node_id = entity_ids(conn, [item["entityName"]], self.project).get(item["entityName"])
                if node_id is None:
                    continue
                doomed = set(item["observations"])
                for edge_id, _, fact, text in observation_edges(conn, [node_id]):
                    if text in doomed:
                        unlink_edge(conn, edge_id, cause=CAUSE)
                        forget_if_orphan(conn, fact)

        await self.store.write(write)

    async def delete_relations(self, relations: Sequence[dict[str, str]]) -> None:
        """Remove relations; unknown ones are ignored."""

        def write(db: sqlite_utils.Database) -> None:
            conn = db.conn
            for rel in relations:
                ids = entity_ids(conn, [rel["from"], rel["to"]], self.project, placeholders=True)
                if rel["from"] in ids and rel["to"] in ids:
                    _unlink_relation(conn, ids[rel["from"]], ids[rel["to"]], rel["relationType"])

        await self.store.write(write)

    async def read_graph(self) -> dict[str, list[dict[str, Any]]]:
        """Every entity and every relation."""
        return await self.store.read(lambda db: graph_of(db.conn, None, self.project))

    async def open_nodes(self, names: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """The named entities (unknown names skipped) and the relations touching them."""

        def read(db: sqlite_utils.Database) -> dict[str, list[dict[str, Any]]]:
            ids = sorted(entity_ids(db.conn, names, self.project).values())
            return graph_of(db.conn, ids, self.project)

        return await self.store.read_bounded(read)

    async def search_nodes(self, query: str) -> dict[str, list[dict[str, Any]]]:
        """Entities whose name, type or an observation contains `query` (any case), best first."""

        def read(db: sqlite_utils.Database) -> dict[str, list[dict[str, Any]]]:
            ranked = _search(db.conn, query)
            return graph_of(db.conn, ranked, self.project, keep_order=True)

        return await self.store.read_bounded(read)


def _unlink_relation(conn: sqlite3.Connection, src: int, dst: int, label: str) -> None:
    row = conn.execute(
        "SELECT id FROM memory_edges WHERE src = ? AND dst = ? AND kind = 'related' AND label = ? AND deleted IS NULL",
        [src, dst, label],
    ).fetchone()
    if row is not None and label != OBSERVATION:
        unlink_edge(conn, row[0], cause=CAUSE)


def _search(conn: sqlite3.Connection, query: str) -> list[int]:
    """Entity ids matching `query` as a substring, ranked: exact name, name, type, then observation BM25."""
    if len(query) >= 3:
        # bm25 only for observations: asked for at all, it counts the phrase's rows over the whole index, which
        # costs more than the match itself, and an entity's own row never uses it.
        rows = conn.execute(
            "SELECT rowid, name, type, CASE WHEN ifnull(name, '') = '' AND ifnull(type, '') = ''"
            " THEN -bm25(memory_names) ELSE 1.0 END FROM memory_names WHERE memory_names MATCH ?",
            [fts_phrase(query)],
        ).fetchall()
    else:
        pattern = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = conn.execute(
            "SELECT rowid, name, type, 1.0 FROM memory_names WHERE name LIKE ?1 ESCAPE '\\'"
            " OR type LIKE ?1 ESCAPE '\\' OR observation LIKE ?1 ESCAPE '\\'",
            [pattern],
        ).fetchall()
    folded = query.casefold()
    scores: dict[int, float] = {}
    facts: dict[int, float] = {}
    for rowid, name, etype, relevance in rows:
        if not (name or etype):
            facts[rowid] = relevance
            continue
        score = 4.0 if name.casefold() == folded else 0.0
        score += (2.0 if folded in name.casefold() else 0.0) + (1.0 if folded in etype.casefold() else 0.0)
        scores[rowid] = score
    top = max(facts.values(), default=1.0) or 1.0
    for entity, fact in entities_of_facts(conn, list(facts)):
        scores[entity] = scores.get(entity, 0.0) + 0.5 + 0.5 * facts[fact] / top
    return [node_id for node_id, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))]
