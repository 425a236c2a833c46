"""A small stdio MCP server for the host's tests: echo, a tool that hangs, one that crashes its process.

Run as `python tests/runtime/host/toy_server.py [MARKER_FILE]`. Each start appends a
line to MARKER_FILE (when given), so a test can count restarts. `grow` adds a
tool named `extra` and tells the client the tool list changed.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer

__all__ = ["main"]

server = MCPServer(name="toy")


@server.tool()
async def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool()
async def where() -> str:
    """The server's working directory and its TOY_SETTING variable."""
    return f"{os.getcwd()} {os.environ.get('TOY_SETTING', '-')}"


@server.tool()
async def hang() -> str:
    """Never answers."""
    await anyio.sleep_forever()
    return "unreachable"


@server.tool()
async def crash() -> str:
    """End the server's process at once, mid-call."""
    os._exit(3)


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named `extra`."""

    async def extra() -> str:
        """A tool that was not there at first."""
        return "extra here"

    server.add_tool(extra)
    await ctx.notify_tools_changed()
    return "grown"


def main() -> None:
    if len(sys.argv) > 1:
        with open(sys.argv[1], "a", encoding="utf-8") as marker:
            marker.write("started\n")
    server.run()


if __name__ == "__main__":
    main()
