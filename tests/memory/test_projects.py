"""Projects: two projects in one home never see each other's memories; every project at once is for reading."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

from loci.memory.engines.sqlite.migrations import migration_sets
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.entities import EntityGraph
from loci.memory.graph.export import export_graph
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.graph.recall import Recall
from loci.memory.imports.files import import_file
from loci.memory.projects import ALL, check_project

FIXTURES = Path(__file__).parent / "imports" / "fixtures"


@pytest.fixture
def apps(store: Store) -> tuple[Graph, Graph]:
    return Graph(store, project="shop"), Graph(store, project="blog")


async def test_a_recall_finds_only_its_own_projects_memories(apps: tuple[Graph, Graph]) -> None:
    shop, blog = apps
    mine, _ = await shop.remember("the payment service retries three times before giving up")
    theirs, _ = await blog.remember("the payment banner on the blog is blue")
    await shop.remember("refunds go through the payment queue", links=[mine.id])
    found = await Recall(shop).recall("payment", k=10)
    assert theirs.id not in {r.node.id for r in found}
    assert mine.id in {r.node.id for r in found}
    assert [r.node.id for r in await Recall(blog).recall("payment", k=10)] == [theirs.id]
    assert await Recall(blog).bm25("payment retries") == [theirs.id]


async def test_an_id_of_another_project_is_not_found_for_reading_writing_or_linking(apps: tuple[Graph, Graph]) -> None:
    shop, blog = apps
    theirs, _ = await blog.remember("draft posts live in the drafts folder")
    mine, _ = await shop.remember("orders are archived after a year")
    for attempt in (
        shop.get(theirs.id),
        shop.edges(theirs.id),
        shop.neighbors(theirs.id),
        shop.update(theirs.id, "changed"),
        shop.forget(theirs.id),
        shop.link(mine.id, theirs.id),
        shop.remember("linked across", links=[theirs.id]),
    ):
        with pytest.raises(NotFoundError, match=f"mem:{theirs.id}"):
            await attempt
    assert (await blog.get(theirs.id)).text == "draft posts live in the drafts folder"
    assert await shop.history(theirs.id) == []


async def test_the_same_fact_in_two_projects_is_two_memories(apps: tuple[Graph, Graph]) -> None:
    shop, blog = apps
    one, _ = await shop.remember("deploy with make release")
    two, created = await blog.remember("deploy with make release")
    assert created and one.id != two.id
    await blog.forget(two.id)
    assert (await shop.get(one.id)).text == "deploy with make release"
    restored = await blog.restore(two.id)
    assert restored.project == "blog"


async def test_every_project_at_once_reads_both_and_writes_neither(store: Store, apps: tuple[Graph, Graph]) -> None:
    shop, blog = apps
    await shop.remember("the shop sells lamps")
    await blog.remember("the blog reviews lamps")
    every = Graph(store, project=ALL)
    assert len(await Recall(every).recall("lamps", k=10)) == 2
    stats = await every.stats()
    assert stats["projects"] == {"shop": 1, "blog": 1}
    assert (await shop.stats())["nodes"] == 1 and "projects" not in await shop.stats()
    with pytest.raises(UsageError, match="name one project"):
        await every.remember("where would this go?")


async def test_export_holds_one_project_unless_asked_for_all(store: Store, apps: tuple[Graph, Graph]) -> None:
    shop, blog = apps
    a, _ = await shop.remember("the shop opens at nine")
    b, _ = await shop.remember("the shop closes at six", links=[a.id])
    await blog.remember("the blog posts on Mondays")
    out = io.StringIO()
    counts = await export_graph(store, out, project="shop")
    data = json.loads(out.getvalue())
    assert counts["nodes"] == 2 and counts["edges"] == 1
    assert {n["text"] for n in data["nodes"]} == {"the shop opens at nine", "the shop closes at six"}
    assert {n["project"] for n in data["nodes"]} == {"shop"}
    everything = io.StringIO()
    assert (await export_graph(store, everything, project=ALL))["nodes"] == 3


async def test_the_entity_view_of_one_project_holds_its_entities_only(store: Store) -> None:
    shop, blog = EntityGraph(store, project="shop"), EntityGraph(store, project="blog")
    await shop.create_entities([{"name": "Ana", "entityType": "person", "observations": ["runs the shop"]}])
    await blog.create_entities([{"name": "Ana", "entityType": "author", "observations": ["writes the blog"]}])
    assert [e["observations"] for e in (await shop.read_graph())["entities"]] == [["runs the shop"]]
    assert [e["entityType"] for e in (await blog.search_nodes("Ana"))["entities"]] == ["author"]
    assert (await shop.search_nodes("writes"))["entities"] == []


async def test_a_conversation_imported_into_two_projects_is_stored_in_each(store: Store) -> None:
    shop, blog = Graph(store, project="shop"), Graph(store, project="blog")
    first = await import_file(shop, FIXTURES / "messages.jsonl")
    again = await import_file(shop, FIXTURES / "messages.jsonl")
    other = await import_file(blog, FIXTURES / "messages.jsonl")
    assert first.added > 0 and again.added == 0 and other.added == first.added
    shop_nodes = {n for c in first.conversations for n in c.nodes if n is not None}
    blog_nodes = {n for c in other.conversations for n in c.nodes if n is not None}
    assert shop_nodes and not shop_nodes & blog_nodes


async def test_evolution_distils_and_lists_procedures_per_project(store: Store) -> None:
    shop = Evolution(Graph(store, project="shop"))
    blog = Evolution(Graph(store, project="blog"))
    assert await shop.procedures() == [] == await blog.procedures()
    node, _ = await Graph(store, project="shop").remember("a recipe", kind="procedural")
    await store.write(lambda db: db.conn.execute("UPDATE memory_nodes SET status = 'active' WHERE id = ?", [node.id]))
    assert [p["id"] for p in await shop.procedures()] == [node.ref]
    assert await blog.procedures() == []
    with pytest.raises(NotFoundError):
        await blog.history(node.ref)


def test_a_home_made_before_projects_has_its_memories_in_default(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    for migrations in migration_sets():  # every table as the release before projects made it
        later = [m.name for m in migrations._migrations if "project" in m.name]  # noqa: SLF001
        migrations.apply(db, stop_before=later or None)
    db.execute(
        "INSERT INTO memory_nodes (kind, text, hash, created, updated)"
        " VALUES ('semantic', 'kept from before', 'h', 0, 0)"
    )
    db.conn.commit()
    db.close()
    store = Store.open_sync(path)
    try:
        node = store.read_sync(lambda d: d.conn.execute("SELECT project, text FROM memory_nodes").fetchone())
    finally:
        store.close()
    assert node == ("default", "kept from before")
    with sqlite3.connect(path) as conn:
        indexes = {row[1] for row in conn.execute("PRAGMA index_list(memory_nodes)")}
    assert {"memory_nodes_hash", "memory_nodes_name", "memory_nodes_project"} <= indexes


@pytest.mark.parametrize("name", ["", "two words", "-dash", "../up", "x" * 65, None, 3])
def test_a_bad_project_name_is_refused_with_what_a_name_may_hold(name: object) -> None:
    with pytest.raises(UsageError, match="project"):
        check_project(name)


async def test_a_project_crowded_out_of_the_best_matches_still_finds_its_own(store: Store) -> None:
    shop, blog = Graph(store, project="shop"), Graph(store, project="blog")
    mine, _ = await shop.remember("a lamp stands in the shop window among chairs, tables and rugs for sale")
    await blog.add_many([NewNode(f"lamp lamp review number {i}") for i in range(120)])
    found = await Recall(shop).recall("lamp", k=5)
    assert [r.node.id for r in found] == [mine.id]
    assert await Recall(shop).bm25("lamp", k=5) == [mine.id]
