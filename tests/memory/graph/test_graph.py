"""The memory graph: identity by content, soft deletion, events, links and browsing, on SQLite and PostgreSQL."""

from __future__ import annotations

import io
import json

import pytest

from loci.memory.engines.base import Engine
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.graph.export import export_graph
from loci.memory.graph.graph import Graph, NewNode, infer_edge_kind
from loci.memory.graph.recall import Recall
from loci.memory.graph.records import MAX_TEXT_CHARS, content_hash, parse_node_id
from loci.memory.projects import ALL


@pytest.fixture
def graph(engine_store: Engine) -> Graph:
    return Graph(engine_store)


async def test_remembering_the_same_fact_twice_returns_the_first_and_counts_a_use(graph: Graph) -> None:
    first, created = await graph.remember("Alice lives in Paris")
    again, created_again = await graph.remember("  alice LIVES in   paris ")
    assert created and not created_again
    assert again.id == first.id
    assert again.uses == 1
    assert again.text == "Alice lives in Paris"


async def test_a_use_counts_once_for_each_time_a_node_or_edge_is_given(graph: Graph) -> None:
    [(a, _), (b, _), (c, _)] = await graph.add_many([NewNode("the boiler"), NewNode("the pump"), NewNode("the valve")])
    edge, _ = await graph.link(a, b)
    await graph.record_use([a, b, b], [edge.id, edge.id])
    assert [(await graph.get(i)).uses for i in (a, b, c)] == [1, 2, 0]
    assert [(e.id, e.uses) for e in await graph.edges(a)] == [(edge.id, 2)]


def test_the_hash_ignores_case_width_and_spacing_but_not_kind() -> None:
    assert content_hash("semantic", "Ｃａｆé  au lait") == content_hash("semantic", "café au LAIT")
    assert content_hash("semantic", "x") != content_hash("episodic", "x")


async def test_the_same_text_of_another_kind_is_another_node(graph: Graph) -> None:
    fact, _ = await graph.remember("deploy with make release")
    recipe, created = await graph.remember("deploy with make release", kind="procedural")
    assert created and recipe.id != fact.id


async def test_a_batch_is_one_transaction_and_dedups_inside_itself(graph: Graph) -> None:
    results = await graph.add_many([NewNode("one"), NewNode("two"), NewNode("ONE"), NewNode("three", "episodic")])
    assert [created for _, created in results] == [True, True, False, True]
    assert results[2][0] == results[0][0]
    stats = await graph.stats()
    assert stats["nodes"] == 3
    assert stats["nodes_by_kind"] == {"semantic": 2, "episodic": 1, "procedural": 0}


async def test_a_batch_finds_earlier_twins_and_named_nodes_and_counts_each_twin_a_use(graph: Graph) -> None:
    old, _ = await graph.remember("the kettle is in the shed")
    gone, _ = await graph.remember("the lamp is broken")
    await graph.forget(gone.id)
    items = [
        NewNode("The kettle is in the shed"),
        NewNode("Ada", name="Ada"),
        NewNode("the lamp is broken"),
        NewNode("the lamp  is BROKEN"),
        NewNode("Ada again", name="Ada"),
    ]
    results = await graph.add_many(items)
    assert results[0] == (old.id, False)
    assert results[1][1] and results[4] == (results[1][0], False)
    assert results[2][1] and results[3] == (results[2][0], False)
    assert results[2][0] > results[1][0] > gone.id
    assert (await graph.get(old.id)).uses == 1
    assert (await graph.get(results[2][0])).uses == 1
    assert (await graph.get(results[1][0])).uses == 0


async def test_a_batch_finds_the_named_nodes_made_before_it_in_its_project_only(
    graph: Graph, engine_store: Engine
) -> None:
    [(ada, _), (bob, _)] = await graph.add_many([NewNode("Ada", name="Ada"), NewNode("Bob", name="Bob")])
    [(elsewhere, made_there)] = await Graph(engine_store, project="other").add_many([NewNode("Ada", name="Ada")])
    await graph.forget(bob)
    results = await graph.add_many([NewNode("Bob", name="Bob"), NewNode("Ada, again", name="Ada"), NewNode("x")])
    assert made_there and elsewhere not in (ada, bob)
    assert results[1] == (ada, False) and results[0][1] and results[0][0] > elsewhere


async def test_a_bad_item_rolls_back_the_whole_batch(graph: Graph) -> None:
    with pytest.raises(UsageError):
        await graph.add_many([NewNode("fine"), NewNode("   ")])
    assert (await graph.stats())["nodes"] == 0


async def test_update_keeps_links_and_records_before_and_after(graph: Graph) -> None:
    a, _ = await graph.remember("the server runs on port 8080")
    b, _ = await graph.remember("the server is nginx", links=[a.id])
    updated = await graph.update(a.id, "the server runs on port 9090")
    assert updated.text == "the server runs on port 9090"
    assert [e.src for e in await graph.edges(a.id)] == [b.id]
    [latest, *_] = await graph.history(a.id)
    assert latest["op"] == "update"
    assert "8080" in latest["before"] and "9090" in latest["after"]
    again, created = await graph.remember("The server runs on port 9090")
    assert again.id == a.id and not created


async def test_update_refuses_to_make_a_twin(graph: Graph) -> None:
    a, _ = await graph.remember("fact one")
    await graph.remember("fact two")
    with pytest.raises(UsageError, match="already says this"):
        await graph.update(a.id, "Fact Two")


async def test_forget_is_soft_retires_edges_and_frees_the_text(graph: Graph, engine_store: Engine) -> None:
    a, _ = await graph.remember("temporary fact")
    b, _ = await graph.remember("linked fact", links=[a.id])
    await graph.forget(a.id)
    with pytest.raises(NotFoundError, match="forgotten"):
        await graph.get(a.id)
    assert await graph.edges(b.id) == []
    row = await engine_store.read(
        lambda db: db.execute("SELECT deleted FROM memory_nodes WHERE id = ?", [a.id]).fetchone()
    )
    assert row[0] is not None
    ops = await engine_store.read(lambda db: [r[0] for r in db.execute("SELECT op FROM memory_events ORDER BY id")])
    assert ops == ["add", "add", "link", "unlink", "delete"]
    fresh, created = await graph.remember("temporary fact")
    assert created and fresh.id != a.id


async def test_remember_links_by_kind_and_relinking_sets_the_weight(graph: Graph) -> None:
    fact, _ = await graph.remember("pytest -x stops at the first failure")
    episode, _ = await graph.remember("ran the suite, fixed one test", kind="episodic", links=[fact.id])
    recipe, _ = await graph.remember("run pytest -x, fix, repeat", kind="procedural", links=[episode.id])
    assert sorted(e.kind for e in await graph.edges(episode.id)) == ["distill", "ground"]
    assert infer_edge_kind("semantic", "semantic") == "related"
    edge, created = await graph.link(fact.id, recipe.id, "related", 0.9)
    again, created_again = await graph.link(fact.id, recipe.id, "related", 0.2)
    assert created and not created_again and again.id == edge.id and again.weight == 0.2


async def test_link_errors_are_clear(graph: Graph) -> None:
    a, _ = await graph.remember("a fact")
    with pytest.raises(UsageError, match="itself"):
        await graph.link(a.id, a.id)
    with pytest.raises(UsageError, match="edge kind"):
        await graph.link(a.id, 999, "friend")
    with pytest.raises(NotFoundError, match="mem:999"):
        await graph.link(a.id, 999)
    with pytest.raises(UsageError, match="between 0 and 1"):
        b, _ = await graph.remember("b fact")
        await graph.link(a.id, b.id, weight=3)


async def test_bad_text_and_ids_give_clear_errors(graph: Graph) -> None:
    with pytest.raises(UsageError, match="empty"):
        await graph.remember("")
    with pytest.raises(UsageError, match="over the limit"):
        await graph.remember("x" * (MAX_TEXT_CHARS + 1))
    with pytest.raises(UsageError, match="unknown node kind"):
        await graph.remember("fine", kind="dream")
    with pytest.raises(NotFoundError, match="no memory mem:42"):
        await graph.get(42)
    with pytest.raises(NotFoundError, match="not a memory id"):
        parse_node_id("doc:3")
    assert parse_node_id("mem:7") == parse_node_id("7") == parse_node_id(7) == 7


async def test_neighbors_walk_both_directions_up_to_depth(graph: Graph) -> None:
    ids = [n for n, _ in await graph.add_many([NewNode(f"chain fact {i}") for i in range(5)])]
    await graph.link_many([(ids[i], ids[i + 1], "related", 0.5) for i in range(4)])
    near = await graph.neighbors(ids[2])
    assert sorted(n.node.id for n in near) == [ids[1], ids[3]]
    far = await graph.neighbors(ids[0], depth=3)
    assert [(n.node.id, n.hops) for n in far] == [(ids[1], 1), (ids[2], 2), (ids[3], 3)]
    episode, _ = await graph.remember("an episode", kind="episodic", links=[ids[0]])
    only = await graph.neighbors(ids[1], depth=2, kinds=["episodic"])
    assert [n.node.id for n in only] == [episode.id]


async def test_stats_count_live_things(graph: Graph) -> None:
    a, _ = await graph.remember("alpha")
    await graph.remember("beta", links=[a.id])
    await graph.forget(a.id)
    stats = await graph.stats()
    assert stats["nodes"] == 1 and stats["forgotten_nodes"] == 1 and stats["edges"] == 0
    assert stats["events"] == 5 and stats["memory_chars"] == len("alpha") + len("beta") + 4 and "db_bytes" not in stats


async def test_a_project_s_stats_count_only_its_own_events_and_size(engine_store: Engine) -> None:
    mine, theirs = Graph(engine_store, project="a"), Graph(engine_store, project="b")
    first, _ = await mine.remember("alpha")
    await mine.remember("beta", links=[first.id])
    for n in range(6):
        await theirs.remember(f"someone else's memory number {n}")
    a, b, every = await mine.stats(), await theirs.stats(), await Graph(engine_store, project=ALL).stats()
    assert (a["events"], b["events"], every["events"]) == (3, 6, 9)
    assert a["memory_chars"] < b["memory_chars"] and "db_bytes" not in a and every["db_bytes"] > 0


async def test_a_project_recalls_gets_and_exports_only_its_own_nodes(engine_store: Engine) -> None:
    mine, theirs = Graph(engine_store, project="a"), Graph(engine_store, project="b")
    kept, _ = await mine.remember("the harbor key hangs by the door")
    other, _ = await theirs.remember("the harbor key is in the safe")
    assert [hit.node.id for hit in await Recall(mine).recall("harbor key")] == [kept.id]
    assert await Recall(mine).bm25("harbor key") == [kept.id]
    with pytest.raises(NotFoundError):
        await mine.get(other.id)
    with pytest.raises(NotFoundError):
        await mine.link(kept.id, other.id)
    out = io.StringIO()
    await export_graph(engine_store, out, project="a")
    assert [node["text"] for node in json.loads(out.getvalue())["nodes"]] == [kept.text]


async def test_a_batch_of_links_adds_only_new_keys_and_logs_each_once(engine_store: Engine) -> None:
    graph = Graph(engine_store)
    ids = [n for n, _ in await graph.add_many([NewNode(f"linked fact {i}") for i in range(4)])]
    assert await graph.link_many([(ids[0], ids[1], "related", 0.5)]) == 1
    batch = [(ids[0], ids[1], "related", 0.9), (ids[1], ids[2], "related", 0.4), (ids[2], ids[3], "distill", 0.3)]
    assert await graph.link_many(batch + batch[1:]) == 2
    links = await engine_store.read(
        lambda conn: conn.execute("SELECT edge, after FROM memory_events WHERE op = 'link' ORDER BY id").fetchall()
    )
    assert [json.loads(after) for _, after in links] == [
        {"src": ids[0], "dst": ids[1], "kind": "related"},
        {"src": ids[1], "dst": ids[2], "kind": "related"},
        {"src": ids[2], "dst": ids[3], "kind": "distill"},
    ]
    assert len({edge for edge, _ in links}) == 3
