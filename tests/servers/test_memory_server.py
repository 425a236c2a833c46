"""The memory MCP server, connected in-process: tools, schemas, and readable errors (on either engine)."""

from __future__ import annotations

from pathlib import Path

from mcp import Client

from loci.memory.engines.base import Engine
from loci.memory.engines.sqlite.store import Store
from loci.servers.memory import memory_server_for
from tests.memory.broken_homes import filled_home, immutable

VERBS = {
    "memory_remember",
    "memory_update",
    "memory_forget",
    "memory_restore",
    "memory_recall",
    "memory_get",
    "memory_neighbors",
    "memory_link",
    "memory_stats",
    "memory_procedures",
    "memory_feedback",
    "memory_refine",
    "memory_consolidate",
}


async def test_the_server_lists_the_thirteen_verbs_with_descriptions(engine_store: Engine) -> None:
    async with Client(memory_server_for(engine_store)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == VERBS
    assert "links" in tools["memory_remember"].input_schema["properties"]
    assert tools["memory_recall"].description.startswith("Recall the k memories")
    assert tools["memory_link"].input_schema["properties"]["kind"]["enum"] == ["ground", "distill", "related"]


async def test_remember_then_recall_over_mcp(engine_store: Engine) -> None:
    async with Client(memory_server_for(engine_store)) as client:
        made = await client.call_tool("memory_remember", {"text": "The office wifi password is hunter2"})
        assert not made.is_error and made.structured_content["id"] == "mem:1"
        found = await client.call_tool("memory_recall", {"query": "wifi password", "k": 3})
        assert not found.is_error
        [hit] = found.structured_content["result"]
        assert hit["id"] == "mem:1" and hit["parts"]["lexical"] == 1.0


async def test_errors_reach_the_client_as_readable_results(engine_store: Engine) -> None:
    async with Client(memory_server_for(engine_store)) as client:
        empty = await client.call_tool("memory_remember", {"text": ""})
        unknown = await client.call_tool("memory_get", {"id": "mem:404"})
        bad_kind = await client.call_tool("memory_remember", {"text": "x", "kind": "dream"})
        syntax = await client.call_tool("memory_recall", {"query": 'NEAR( "oops *'})
    assert empty.is_error and "empty" in empty.content[0].text
    assert unknown.is_error and "no memory mem:404" in unknown.content[0].text
    assert bad_kind.is_error
    assert not syntax.is_error


async def test_a_read_only_home_is_the_reason_the_client_reads(tmp_path: Path) -> None:
    path = await filled_home(tmp_path / "loci.db", facts=1)
    with immutable(path):
        async with await Store.open(path) as store, Client(memory_server_for(store)) as client:
            made = await client.call_tool("memory_remember", {"text": "one more fact"})
            found = await client.call_tool("memory_recall", {"query": "harbor"})
    assert made.is_error
    assert f"cannot write the Loci home {path}" in made.content[0].text and "read-only" in made.content[0].text
    assert not found.is_error


async def test_a_server_for_one_project_serves_its_memories_documents_and_resources_only(
    store: Store, tmp_path: Path
) -> None:
    from loci.servers.app import build_app

    (tmp_path / "shop.md").write_text("The shop's courier is Velo.\n", encoding="utf-8")
    (tmp_path / "blog.md").write_text("The blog's courier column runs weekly.\n", encoding="utf-8")
    shop = build_app(store, ("context", "memory"), roots=[tmp_path], project="shop")
    blog = build_app(store, ("context", "memory"), roots=[tmp_path], project="blog")
    async with Client(shop) as a, Client(blog) as b:
        await a.call_tool("memory_remember", {"text": "the shop's courier is Velo"})
        await b.call_tool("memory_remember", {"text": "the blog's courier column runs weekly"})
        await a.call_tool("context_load", {"path": str(tmp_path / "shop.md")})
        await b.call_tool("context_load", {"path": str(tmp_path / "blog.md")})
        found = (await a.call_tool("memory_recall", {"query": "courier", "k": 5})).structured_content["result"]
        hits = (await a.call_tool("context_search", {"query": "courier"})).structured_content
        other = await a.call_tool("memory_get", {"id": "mem:2"})
        listed = {r.name for r in (await a.list_resources()).resources}
    assert [hit["text"] for hit in found] == ['<stored-notes source="loci">the shop\'s courier is Velo</stored-notes>']
    assert "Velo" in str(hits) and "weekly" not in str(hits)
    assert other.is_error and "no memory mem:2" in other.content[0].text
    assert "mem:1" in listed and "mem:2" not in listed and "blog.md" not in listed
