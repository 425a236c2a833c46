"""Creating entities in one batch leaves the home as creating them one at a time did, in a few statements."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError
from loci.memory.graph.entities import EntityGraph
from loci.memory.graph.entities_ops import add_observation, create_entities, create_relations, ensure_entity
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.graph.ops import upsert_edge

BATCH = [
    {"name": "Ada", "entityType": "person", "observations": ["wrote the first program", "Likes  TEA"]},
    {"name": "Babbage", "entityType": "person", "observations": ["likes tea", "wrote the first program"]},
    {"name": "Ada", "entityType": "robot", "observations": ["a second Ada is ignored"]},
    {"name": "Engine", "entityType": "machine", "observations": ["remembered before", "gears", "gears"]},
    {"name": "Known", "entityType": "thing", "observations": [""]},  # exists: skipped unchecked, as before
    {"name": "Ünïcode ﬁ", "entityType": "thing", "observations": ["ﬁne print", "fine print"]},
]


RELATIONS = [
    {"from": "Ada", "to": "Babbage", "relationType": "knows"},
    {"from": "Ada", "to": "Nobody_yet", "relationType": "knows"},
    {"from": "Nobody_yet", "to": "Later", "relationType": "waits_for"},
    {"from": "Ada", "to": "Babbage", "relationType": "knows"},
    {"from": "Known", "to": "Engine", "relationType": "drives"},
    {"from": "Ada", "to": "Ada", "relationType": "is"},
    {"from": "Babbage", "to": "Ada", "relationType": "knows"},
]


def _relations_one_at_a_time(conn: sqlite3.Connection, relations: list[dict[str, str]], project: str) -> list:
    """How relations were created before: both ends, then the edge, for each in turn."""
    created = []
    for rel in relations:
        src = ensure_entity(conn, rel["from"], None, project)[0]
        dst = ensure_entity(conn, rel["to"], None, project)[0]
        if upsert_edge(conn, src, dst, "related", label=rel["relationType"], cause="compat", allow_self=True)[1]:
            created.append(rel)
    return created


def _one_at_a_time(conn: sqlite3.Connection, entities: list[dict[str, Any]], project: str) -> list[dict[str, Any]]:
    """How the batch was created before: each entity, then each of its observations, in turn."""
    created = []
    for entity in entities:
        node_id, new = ensure_entity(conn, entity["name"], entity["entityType"], project)
        if new:
            for text in entity["observations"]:
                add_observation(conn, node_id, text, project)
            created.append(entity)
    return created


async def _home(path: Path, batched: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    async with await Store.open(path) as store:
        entities = EntityGraph(store)
        await entities.create_entities([{"name": "Known", "entityType": "thing", "observations": ["old"]}])
        await entities.create_relations([{"from": "Known", "to": "Engine", "relationType": "drives"}])  # a placeholder
        await Graph(store).add_many([NewNode("remembered before")], cause="test")  # a fact outside the index
        if batched:
            created = await entities.create_entities(BATCH)
            created += await entities.create_relations(RELATIONS)
        else:
            created = await store.write(lambda db: _one_at_a_time(db.conn, BATCH, "default"))
            created += await store.write(lambda db: _relations_one_at_a_time(db.conn, RELATIONS, "default"))
        return created, await store.read(lambda db: _state(db.conn)) | {
            "graph": await entities.read_graph(),
            "search": [await entities.search_nodes(q) for q in ("tea", "program", "gears", "fine")],
        }


def _state(conn: sqlite3.Connection) -> dict[str, Any]:
    """What the home holds, apart from the ids the rows were given."""
    text = dict(conn.execute("SELECT id, coalesce(name, text) FROM memory_nodes"))
    return {
        "nodes": Counter(conn.execute("SELECT kind, text, name, hash, meta, uses, deleted FROM memory_nodes")),
        "edges": Counter(
            (text[src], text[dst], kind, label, weight, meta)
            for src, dst, kind, label, weight, meta in conn.execute(
                "SELECT src, dst, kind, label, weight, meta FROM memory_edges"
            )
        ),
        "names": Counter(conn.execute("SELECT name, type, observation FROM memory_names")),
        "events": Counter(conn.execute("SELECT op, cause FROM memory_events")),
        "fts": conn.execute("SELECT count(*) FROM memory_fts").fetchone(),
    }


async def test_a_batch_leaves_the_home_as_one_entity_at_a_time_did(tmp_path: Path) -> None:
    created, batched = await _home(tmp_path / "batched.db", batched=True)
    expected, one_by_one = await _home(tmp_path / "one.db", batched=False)
    assert created == expected and [e.get("name") for e in created[:4]] == ["Ada", "Babbage", "Engine", "Ünïcode ﬁ"]
    assert created[4:] == [RELATIONS[i] for i in (0, 1, 2, 5, 6)]
    assert batched == one_by_one


@pytest.mark.parametrize(
    "bad",
    [
        [
            {"name": "Fine", "entityType": "t", "observations": [""]},
            {"name": "", "entityType": "t", "observations": []},
        ],
        [
            {"name": "", "entityType": "t", "observations": []},
            {"name": "X", "entityType": "bad type!", "observations": []},
        ],
        [{"from": "A", "to": "B", "relationType": "bad label!"}, {"from": "", "to": "C", "relationType": "r"}],
        [{"from": "A", "to": "", "relationType": "bad label!"}],
    ],
)
async def test_a_bad_batch_fails_with_the_first_error_one_at_a_time_met_and_writes_nothing(
    store: Store, bad: list[dict[str, Any]]
) -> None:
    old, new = (
        (_one_at_a_time, create_entities) if "entityType" in bad[0] else (_relations_one_at_a_time, create_relations)
    )
    with pytest.raises(UsageError) as one_by_one:
        await store.write(lambda db: old(db.conn, bad, "default"))
    with pytest.raises(UsageError) as batched:
        await store.write(lambda db: new(db.conn, bad, "default"))
    assert str(batched.value) == str(one_by_one.value)
    assert await store.read(lambda db: db.execute("SELECT count(*) FROM memory_nodes").fetchone()) == (0,)


@pytest.mark.parametrize("size", [2, 20])
async def test_a_batch_of_new_entities_reads_the_home_in_as_many_statements_whatever_its_size(
    store: Store, size: int
) -> None:
    entities = [
        {"name": f"E{size}_{i}", "entityType": "t", "observations": [f"fact {size} {i}", f"other {size} {i}"]}
        for i in range(size)
    ]
    reads: list[str] = []

    def read(sql: str) -> None:
        if sql.startswith("SELECT") and "'main'." not in sql:  # not FTS5's own reads of its tables
            reads.append(sql)

    def write(db: Any) -> list[dict[str, Any]]:
        db.conn.set_trace_callback(read)
        try:
            return create_entities(db.conn, entities, "default")
        finally:
            db.conn.set_trace_callback(None)

    assert await store.write(write) == entities
    # the names asked once by the batch, once by insert_nodes; the facts' twins once; two batches' first ids
    assert len(reads) == 5, "\n".join(r[:90] for r in reads)
    assert await EntityGraph(store).search_nodes(f"other {size} {size - 1}") == {
        "entities": [entities[-1]],
        "relations": [],
    }
