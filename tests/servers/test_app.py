"""The merged `loci` server: what it tells the transport about its tools."""

from __future__ import annotations

from mcp import Client

from memory.store import Store
from servers.app import build_app


async def test_the_transport_finds_a_tools_input_schema_by_name_as_the_listing_gives_it(store: Store) -> None:
    app = build_app(store, ["memory"])
    lookup = app.get_tool_input_schema
    assert lookup is not None
    async with Client(app) as client:
        listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        assert lookup("memory_recall") == listed["memory_recall"]
        assert "query" in lookup("memory_recall")["properties"]
        assert lookup("context_search") is None  # not a tool this server serves
