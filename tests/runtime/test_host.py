"""The MCP host: external servers from an mcpServers file, namespacing, and clean errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from memory.errors import ModelBehaviorError, UsageError
from memory.store import Store
from runtime.host import McpHost, load_server_config
from servers.app import build_app


async def test_an_external_stdio_server_is_namespaced_and_callable(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    command = {"command": sys.executable, "args": ["-m", "runtime.cli", "serve", "memory", "--compat", "--db", str(tmp_path / "ext.db")]}
    config.write_text(json.dumps({"mcpServers": {"graph": command}}), encoding="utf-8")
    with anyio.fail_after(60):
        async with McpHost() as host:
            await host.add_config(config)
            names = {tool.name for tool in host.tools}
            created = await host.call("graph__create_entities", {"entities": [{"name": "Ada", "entityType": "person", "observations": []}]})
            unknown = await host.call("create_entities", {})
    assert "graph__search_nodes" in names and "search_nodes" not in names
    assert not created.is_error and "Ada" in created.text
    assert unknown.is_error and "unknown tool" in unknown.text


async def test_two_servers_with_the_same_tool_are_refused(store: Store) -> None:
    async with McpHost() as host:
        await host.add("one", build_app(store, ("context",)))
        with pytest.raises(UsageError, match="two MCP servers offer a tool named 'context_list'"):
            await host.add("two", build_app(store, ("context",)))
        assert len(host.tools) == len({tool.name for tool in host.tools})


async def test_an_error_inside_the_host_comes_out_whole(store: Store) -> None:
    with pytest.raises(ModelBehaviorError, match="the model misbehaved"):
        async with McpHost() as host:
            await host.add("context", build_app(store, ("context",)))
            raise ModelBehaviorError("the model misbehaved")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ('{"servers": {}}', "must hold an object with an `mcpServers` object"),
        ('{"mcpServers": {"x": {"args": []}}}', "needs a `command` or a `url`"),
    ],
)
def test_a_malformed_server_file_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        load_server_config(path)


def test_a_missing_server_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read the MCP server file"):
        load_server_config(tmp_path / "nope.json")


async def test_a_tool_that_does_not_answer_in_time_is_an_error_result(store: Store) -> None:
    from mcp.server.mcpserver import MCPServer

    slow = MCPServer(name="slow")

    @slow.tool()
    async def wait_forever() -> str:
        """Never answers in time."""
        await anyio.sleep(30)
        return "late"

    with anyio.fail_after(20):
        async with McpHost(call_timeout=0.5) as host:
            await host.add("slow", slow)
            result = await host.call("wait_forever", {})
    assert result.is_error and "wait_forever failed: Timed out after 0.5s" in result.text
