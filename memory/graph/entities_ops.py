"""The entity view's reads and writes, as plain functions of a connection.

See memory/graph/entities.py for the model. These run inside one `Store.read` or
`Store.write` call; each query is bounded by the ids it is given and uses an
index (entity names, edge endpoints), except the whole-graph read.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any

from loci.memory.graph.ops import NewNode, forget_node, insert_nodes, log_event, upsert_edge
from loci.memory.graph.records import check_label, check_text
from loci.memory.params import CHUNK, in_chunks

__all__ = [
    "CAUSE",
    "OBSERVATION",
    "add_observation",
    "create_entities",
    "create_relations",
    "entities_of_facts",
    "entity_ids",
    "ensure_entity",
    "forget_if_orphan",
    "graph_of",
    "observation_edges",
]

OBSERVATION = "observation"
CAUSE = "compat"  # the cause every change made through the entity view records in memory_events


def entity_ids(
    conn: sqlite3.Connection, names: Iterable[str], project: str, placeholders: bool = False
) -> dict[str, int]:
    """Live entity ids of `project` by name; placeholders (named only by a relation) only if asked."""
    found: dict[str, int] = {}
    for chunk, marks in in_chunks(list(dict.fromkeys(names))):
        sql = f"SELECT id, name, meta FROM memory_nodes WHERE project = ? AND name IN ({marks}) AND deleted IS NULL"
        for node_id, name, meta in conn.execute(sql, [project, *chunk]):
            if placeholders or not json.loads(meta).get("placeholder"):
                found[name] = node_id
    return found


def ensure_entity(conn: sqlite3.Connection, name: str, entity_type: str | None, project: str) -> tuple[int, bool]:
    """The entity's id in `project`, creating it (or a placeholder when `entity_type` is None);
    `(id, newly an entity)`."""
    if entity_type is not None:
        check_label(entity_type, "entity type")
    row = conn.execute(
        "SELECT id, meta FROM memory_nodes WHERE project = ? AND name = ? AND deleted IS NULL", [project, name]
    ).fetchone()
    if row is not None:
        node_id, meta = row[0], json.loads(row[1])
        if not meta.get("placeholder") or entity_type is None:
            return node_id, False
        conn.execute(
            "UPDATE memory_nodes SET meta = ? WHERE id = ?", [json.dumps({"entityType": entity_type}), node_id]
        )
        log_event(
            conn,
            "update",
            node=node_id,
            before={"meta": meta},
            after={"meta": {"entityType": entity_type}},
            cause=CAUSE,
        )
    else:
        check_text(name, "entity name")
        meta = {"entityType": entity_type} if entity_type is not None else {"entityType": "", "placeholder": True}
        [(node_id, _)] = insert_nodes(conn, [NewNode(name, "semantic", meta, name=name)], CAUSE, project=project)
        if entity_type is None:
            return node_id, False
    conn.execute(
        "INSERT INTO memory_names (rowid, name, type, observation) VALUES (?, ?, ?, '')", [node_id, name, entity_type]
    )
    return node_id, True


def create_entities(conn: sqlite3.Connection, entities: Sequence[dict[str, Any]], project: str) -> list[dict[str, Any]]:
    """Create the entities whose names are new in `project` (a placeholder becomes one), with their observations;
    returns those, as given. The same as `ensure_entity` and `add_observation` for each in turn (the same checks in
    the same order, the same rows and events), in a few statements for the whole batch instead of some thirty
    for each entity: its nodes go in with one `insert_nodes` and its observations with another."""
    found = {
        name: (node_id, json.loads(meta))
        for name, node_id, meta in _named(conn, [e["name"] for e in entities], project)
    }
    made: list[dict[str, Any]] = []
    converted: list[tuple[int, dict[str, Any], str]] = []
    seen: set[str] = set()
    for entity in entities:  # the checks first, in the order one call at a time made them
        check_label(entity["entityType"], "entity type")
        name = entity["name"]
        if name in seen or (name in found and not found[name][1].get("placeholder")):
            continue
        if name not in found:
            check_text(name, "entity name")
        else:
            converted.append((found[name][0], found[name][1], entity["entityType"]))
        seen.add(name)
        for text in entity["observations"]:
            check_text(text, "observation")
        made.append(entity)
    for node_id, meta, entity_type in converted:
        conn.execute(
            "UPDATE memory_nodes SET meta = ? WHERE id = ?", [json.dumps({"entityType": entity_type}), node_id]
        )
        after = {"meta": {"entityType": entity_type}}
        log_event(conn, "update", node=node_id, before={"meta": meta}, after=after, cause=CAUSE)
    fresh = [e for e in made if e["name"] not in found]
    nodes = [NewNode(e["name"], "semantic", {"entityType": e["entityType"]}, name=e["name"]) for e in fresh]
    inserted = insert_nodes(conn, nodes, CAUSE, project=project)
    ids = {e["name"]: node_id for e, (node_id, _) in zip(fresh, inserted, strict=True)}
    ids.update({name: node_id for name, (node_id, _) in found.items()})
    conn.executemany(
        "INSERT INTO memory_names (rowid, name, type, observation) VALUES (?, ?, ?, '')",
        [(ids[e["name"]], e["name"], e["entityType"]) for e in made],
    )
    _observe(conn, [(ids[e["name"]], text) for e in made for text in e["observations"]], project)
    return made


def create_relations(
    conn: sqlite3.Connection, relations: Sequence[dict[str, str]], project: str
) -> list[dict[str, str]]:
    """Create the relations that are new in `project`, with a placeholder for each name no node has yet; returns
    those, as given. The same as `ensure_entity` for both ends and `upsert_edge` for each relation in turn (the same
    checks in the same order, the same rows and events), with the placeholders inserted together."""
    ids = {name: node_id for name, node_id, _ in _named(conn, [n for r in relations for n in _ends(r)], project)}
    missing: list[str] = []
    for rel in relations:  # the checks first, in the order one call at a time made them
        for name in _ends(rel):
            if name not in ids and name not in missing:
                check_text(name, "entity name")
                missing.append(name)
        check_label(rel["relationType"], "edge label")
    if missing:
        placeholder = {"entityType": "", "placeholder": True}
        nodes = [NewNode(name, "semantic", placeholder, name=name) for name in missing]
        made = insert_nodes(conn, nodes, CAUSE, project=project)
        ids.update(zip(missing, [node_id for node_id, _ in made], strict=True))
    rows = [(ids[rel["from"]], ids[rel["to"]], rel["relationType"], None) for rel in relations]
    made = _new_edges(conn, rows, skip_existing=True)  # one made before, or earlier in the batch, is skipped
    created, seen = [], set()
    for rel, (src, dst, label, _) in zip(relations, rows, strict=True):
        if (src, dst, label) in made and (src, dst, label) not in seen:
            seen.add((src, dst, label))
            created.append(rel)
    return created


def _new_edges(
    conn: sqlite3.Connection, rows: Sequence[tuple[int, int, str, str | None]], skip_existing: bool = False
) -> dict[tuple[int, int, str], int]:
    """Insert `related` edges `(src, dst, label, meta)` in order, with a `link` event each: a few multi-row
    statements instead of one (or two, with the check for a live twin) per edge. With `skip_existing`, an edge
    whose live twin exists (made before, or earlier in `rows`) is not inserted. `(src, dst, label)` -> new id."""
    conflict = " ON CONFLICT DO NOTHING" if skip_existing else ""
    now, made = time.time(), {}
    for chunk, _ in in_chunks(rows, CHUNK // 3):  # six parameters a row, under the oldest builds' 999
        values = ",".join(["(?, ?, 'related', ?, 0.5, ?, ?, ?)"] * len(chunk))
        sql = (
            f"INSERT INTO memory_edges (src, dst, kind, label, weight, meta, created, updated) VALUES {values}"
            f"{conflict} RETURNING id, src, dst, label"
        )
        params = [value for src, dst, label, meta in chunk for value in (src, dst, label, meta, now, now)]
        for edge_id, src, dst, label in sorted(conn.execute(sql, params).fetchall()):
            made[src, dst, label] = edge_id
    events = [(now, "link", edge_id, _link_event(*key), CAUSE) for key, edge_id in made.items()]
    conn.executemany("INSERT INTO memory_events (at, op, edge, after, cause) VALUES (?, ?, ?, ?, ?)", events)
    return made


def _link_event(src: int, dst: int, label: str) -> str:
    """The `after` of a new related edge's `link` event, as `json.dumps` writes it."""
    return f'{{"src": {src}, "dst": {dst}, "kind": "related", "label": {json.dumps(label, ensure_ascii=False)}}}'


def _ends(relation: dict[str, str]) -> tuple[str, str]:
    return relation["from"], relation["to"]


def _named(conn: sqlite3.Connection, names: Iterable[str], project: str) -> list[tuple[str, int, str]]:
    """`(name, id, meta)` of the live named nodes of `project` among `names`."""
    rows: list[tuple[str, int, str]] = []
    for chunk, marks in in_chunks(list(dict.fromkeys(names))):
        sql = f"SELECT name, id, meta FROM memory_nodes WHERE project = ? AND name IN ({marks}) AND deleted IS NULL"
        rows.extend(conn.execute(sql, [project, *chunk]))
    return rows


def _observe(conn: sqlite3.Connection, pairs: Sequence[tuple[int, str]], project: str) -> None:
    """`add_observation` for each `(entity, text)` of entities that have no observation yet, in turn."""
    facts = insert_nodes(conn, [NewNode(text, "semantic") for _, text in pairs], CAUSE, project=project)
    # A fact made here holds the text given and has no row in memory_names (its id is new): only a twin found
    # is read back, for its stored text and whether an earlier observation indexed it.
    stored = {fact: text for (_, text), (fact, created) in zip(pairs, facts, strict=True) if created}
    ids = sorted({fact for fact, _ in facts} - stored.keys())
    indexed: set[int] = set()
    for chunk, marks in in_chunks(ids):
        stored.update(conn.execute(f"SELECT id, text FROM memory_nodes WHERE id IN ({marks})", chunk))
        indexed.update(
            row[0] for row in conn.execute(f"SELECT rowid FROM memory_names WHERE rowid IN ({marks})", chunk)
        )
    names = [(fact, stored[fact]) for fact in dict.fromkeys(f for f, _ in facts) if fact not in indexed]
    conn.executemany("INSERT INTO memory_names (rowid, name, type, observation) VALUES (?, '', '', ?)", names)
    edges: dict[tuple[int, int, str], str | None] = {}  # the first of the same fact on one entity is linked
    for (entity, text), (fact, _) in zip(pairs, facts, strict=True):
        if (entity, fact, OBSERVATION) not in edges:
            edges[entity, fact, OBSERVATION] = json.dumps({"as": text}) if text != stored[fact] else None
    _new_edges(conn, [(*key, meta) for key, meta in edges.items()])


def add_observation(conn: sqlite3.Connection, entity: int, text: str, project: str) -> bool:
    """Link a fact to an entity (the project's fact node is shared if it exists); False if already there."""
    check_text(text, "observation")
    [(fact, created)] = insert_nodes(conn, [NewNode(text, "semantic")], CAUSE, project=project)
    stored = conn.execute("SELECT text FROM memory_nodes WHERE id = ?", [fact]).fetchone()[0]
    if created or conn.execute("SELECT 1 FROM memory_names WHERE rowid = ?", [fact]).fetchone() is None:
        conn.execute("INSERT INTO memory_names (rowid, name, type, observation) VALUES (?, '', '', ?)", [fact, stored])
    meta = {"as": text} if text != stored else None
    _, new = upsert_edge(conn, entity, fact, "related", label=OBSERVATION, meta=meta, cause=CAUSE, project=project)
    return new


def observation_edges(conn: sqlite3.Connection, entities: Sequence[int]) -> list[tuple[int, int, int, str]]:
    """`(edge id, entity, fact, observation text)` for the entities' live observations, oldest first."""
    rows: list[tuple[int, int, int, str]] = []
    for chunk, marks in in_chunks(entities):
        sql = (
            "SELECT e.id, e.src, e.dst, e.meta, n.text FROM memory_edges e JOIN memory_nodes n ON n.id = e.dst"
            f" WHERE e.deleted IS NULL AND e.src IN ({marks}) AND e.label = ? AND n.name IS NULL AND n.deleted IS NULL"
        )
        for edge_id, src, dst, meta, text in conn.execute(sql, [*chunk, OBSERVATION]):
            rows.append((edge_id, src, dst, json.loads(meta)["as"] if meta else text))
    return sorted(rows)


def entities_of_facts(conn: sqlite3.Connection, facts: Sequence[int]) -> list[tuple[int, int]]:
    """`(entity, fact)` for every live observation edge pointing at one of `facts`."""
    rows: list[tuple[int, int]] = []
    for chunk, marks in in_chunks(facts):
        sql = (
            "SELECT e.src, e.dst FROM memory_edges e JOIN memory_nodes n ON n.id = e.src"
            f" WHERE e.deleted IS NULL AND e.dst IN ({marks}) AND e.label = ? AND n.name IS NOT NULL"
        )
        rows.extend(conn.execute(sql, [*chunk, OBSERVATION]).fetchall())
    return rows


def forget_if_orphan(conn: sqlite3.Connection, fact: int) -> None:
    """Forget an observation fact that no edge holds any more."""
    held = conn.execute(
        "SELECT 1 FROM memory_edges WHERE deleted IS NULL AND (src = ?1 OR dst = ?1) LIMIT 1", [fact]
    ).fetchone()
    alive = conn.execute(
        "SELECT 1 FROM memory_nodes WHERE id = ? AND deleted IS NULL AND name IS NULL", [fact]
    ).fetchone()
    if alive and not held:
        forget_node(conn, fact, cause=CAUSE)


def graph_of(
    conn: sqlite3.Connection, ids: Sequence[int] | None, project: str, keep_order: bool = False
) -> dict[str, list[dict[str, Any]]]:
    """The reference's `{entities, relations}` for these entity ids of `project` (None: its whole graph)."""
    if ids is None:
        rows = conn.execute(
            "SELECT id, name, meta FROM memory_nodes WHERE project = ? AND name IS NOT NULL AND deleted IS NULL"
            " ORDER BY id",
            [project],
        )
    else:
        rows = []
        for chunk, marks in in_chunks(ids):
            sql = f"SELECT id, name, meta FROM memory_nodes WHERE id IN ({marks}) AND deleted IS NULL AND project = ?"
            rows.extend(conn.execute(sql, [*chunk, project]))
    entities: dict[int, dict[str, Any]] = {}
    for node_id, name, meta in rows:
        decoded = json.loads(meta)
        if not decoded.get("placeholder"):
            entities[node_id] = {"name": name, "entityType": decoded.get("entityType", ""), "observations": []}
    order = [i for i in ids if i in entities] if keep_order and ids is not None else sorted(entities)
    for _, entity, _, text in observation_edges(conn, list(entities)):
        entities[entity]["observations"].append(text)
    return {
        "entities": [entities[i] for i in order],
        "relations": _relations(conn, None if ids is None else list(entities), project),
    }


def _relations(conn: sqlite3.Connection, ids: list[int] | None, project: str) -> list[dict[str, str]]:
    select = (
        "SELECT e.id, s.name, d.name, e.label FROM memory_edges e"
        " JOIN memory_nodes s ON s.id = e.src JOIN memory_nodes d ON d.id = e.dst"
        " WHERE e.deleted IS NULL AND e.kind = 'related' AND s.name IS NOT NULL AND d.name IS NOT NULL"
    )
    if ids is None:
        rows = conn.execute(f"{select} AND s.project = ?", [project]).fetchall()
    else:
        rows = []
        for chunk, marks in in_chunks(ids):
            sql = f"{select} AND e.src IN ({marks}) UNION {select} AND e.dst IN ({marks})"
            rows.extend(conn.execute(sql, chunk + chunk))
    unique = sorted(set(rows))
    return [{"from": src, "to": dst, "relationType": label} for _, src, dst, label in unique]
