"""The context MCP server, driven through a real in-process MCP client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from loci.memory.context.store import ContextStore, Target
from loci.memory.engines.sqlite.store import Store
from loci.servers.context import TOOL_NAMES, build_context_server
from loci.tools.context import ContextTools


async def loaded(store: Store, tmp_path: Path) -> ContextStore:
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\nThe launch code is 0000.\n\n## Later\n\nNothing else.\n")
    contexts = ContextStore(store, roots=[tmp_path])
    await contexts.add_file(path)
    return contexts


async def test_server_lists_the_six_tools_with_descriptions(store: Store, tmp_path: Path) -> None:
    server = build_context_server(ContextTools(await loaded(store, tmp_path)))
    async with Client(server) as client:
        listed = await client.list_tools()
    assert sorted(t.name for t in listed.tools) == sorted(TOOL_NAMES)
    assert all(t.description for t in listed.tools)
    read = next(t for t in listed.tools if t.name == "context_read")
    assert read.input_schema["properties"]["unit"]["enum"] == ["lines", "tokens"]


async def test_search_then_read_through_mcp(store: Store, tmp_path: Path) -> None:
    server = build_context_server(ContextTools(await loaded(store, tmp_path)))
    async with Client(server) as client:
        found = await client.call_tool("context_search", {"query": "launch code"})
        [hit] = found.structured_content["result"]
        read = await client.call_tool("context_read", {"id": hit["id"], "start": hit["line"], "end": hit["line"]})
        outline = await client.call_tool("context_outline", {"id": hit["id"]})
    assert not found.is_error and hit["line"] == 3
    assert read.structured_content["text"] == "The launch code is 0000.\n"
    assert [e["title"] for e in outline.structured_content["entries"]] == ["Notes", "Later"]


async def test_errors_reach_the_model_as_readable_results(store: Store, tmp_path: Path) -> None:
    server = build_context_server(ContextTools(await loaded(store, tmp_path)))
    async with Client(server) as client:
        missing = await client.call_tool("context_read", {"id": "doc:42"})
        bad_regex = await client.call_tool("context_search", {"query": "(a", "regex": True})
        no_model = await client.call_tool("context_ask", {"question": "q", "target": "doc:1"})
        bad_unit = await client.call_tool("context_read", {"id": "doc:1", "unit": "pages"})
    assert missing.is_error and "no context object doc:42" in missing.content[0].text
    assert bad_regex.is_error and "does not compile" in bad_regex.content[0].text
    assert no_model.is_error and "needs a model" in no_model.content[0].text
    assert bad_unit.is_error and "unit" in bad_unit.content[0].text


async def test_catastrophic_regex_through_mcp_is_a_bounded_error(store: Store, tmp_path: Path) -> None:
    contexts = ContextStore(store, regex_timeout=1.0)
    await contexts.add_text("doc", "as", "a" * 2000 + "b\n")
    async with Client(build_context_server(ContextTools(contexts))) as client:
        with anyio.fail_after(20):
            result = await client.call_tool("context_search", {"query": "(a+)+$", "regex": True})
    assert result.is_error and "did not finish" in result.content[0].text


async def test_map_through_mcp_stores_answers(store: Store, tmp_path: Path) -> None:
    async def asker(question: str, target: Target) -> dict[str, Any]:
        return {"answer": f"{question} @ {target}", "evidence": [str(target)], "status": "ok"}

    server = build_context_server(ContextTools(await loaded(store, tmp_path), asker, concurrency=2))
    async with Client(server) as client:
        mapped = await client.call_tool("context_map", {"question": "what", "targets": ["doc:1:1-3", "doc:1:5-7"]})
        results = mapped.structured_content["result"]
        listed = await client.call_tool("context_list", {"kinds": ["doc", "obs"]})
    assert [r["answer"] for r in results] == ["what @ doc:1:1-3", "what @ doc:1:5-7"]
    ids = [o["id"] for o in listed.structured_content["objects"]]
    # Each answer is stored when its child finishes, so two children at once store theirs in either order.
    assert ids[0] == "doc:1" and sorted(ids[1:]) == sorted(r["id"] for r in results)
