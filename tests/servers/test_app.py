"""The merged `loci` server: what it tells the transport about its tools."""

from __future__ import annotations

from mcp import Client

from loci.memory.engines.sqlite.store import Store
from loci.servers.app import build_app
from loci.servers.tool_sets import READ_TOOLS


async def test_the_transport_finds_a_tools_input_schema_by_name_as_the_listing_gives_it(store: Store) -> None:
    app = build_app(store, ["memory"])
    lookup = app.get_tool_input_schema
    assert lookup is not None
    async with Client(app) as client:
        listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        assert lookup("memory_recall") == listed["memory_recall"]
        assert "query" in lookup("memory_recall")["properties"]
        assert lookup("context_search") is None  # not a tool this server serves


async def test_a_read_only_server_lists_and_calls_only_the_tools_that_read(store: Store) -> None:
    async with Client(build_app(store)) as full, Client(build_app(store, read_only=True)) as reader:
        every = {tool.name for tool in (await full.list_tools()).tools}
        offered = {tool.name for tool in (await reader.list_tools()).tools}
        refused = await reader.call_tool("memory_remember", {"text": "a note"})
        recalled = await reader.call_tool("memory_recall", {"query": "a note"})
        stats = await full.call_tool("memory_stats", {})
    assert every >= READ_TOOLS  # a renamed tool cannot drop out of the list unnoticed
    assert offered == READ_TOOLS & every and "memory_remember" in every - offered
    assert (
        refused.is_error
        and refused.content[0].text == "memory_remember writes to the home, and this token is read-only"
    )
    assert not recalled.is_error and stats.structured_content["nodes"] == 0
