"""The served servers carry none of the SDK's OpenTelemetry middleware, and keep the rest of their chain."""

from __future__ import annotations

from pathlib import Path

from mcp import Client
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.mcpserver import MCPServer

from loci.memory.engines.sqlite.store import Store
from loci.servers.app import build_app
from loci.servers.memory_compat import build_compat_server
from loci.servers.tracing import untraced


def _traced(middleware: list[object]) -> bool:
    return any(isinstance(m, OpenTelemetryMiddleware) for m in middleware)


async def test_the_merged_and_the_compatible_servers_open_no_span_per_message(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "loci.db") as store:
        app = build_app(store, ["memory"])
        compat = build_compat_server(store)
        assert not _traced(app.middleware)
        assert not _traced(compat.middleware)
        async with Client(app) as client:
            remembered = await client.call_tool("memory_remember", {"text": "The kiln fires at noon."})
            found = await client.call_tool("memory_recall", {"query": "kiln"})
        assert not remembered.is_error
        assert "kiln" in found.content[0].text


def test_untraced_keeps_every_other_middleware() -> None:
    server = MCPServer(name="probe")
    others = [m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)]
    assert _traced(server.middleware) and others
    assert untraced(server).middleware == others
