"""The MCP host: the runtime is a client of every server its agent may use.

Built-in servers (`context`, `memory`, `history`) are `MCPServer` instances
connected in-process (no framing, the fastest path); external servers come
from an `mcpServers` JSON file, the format MCP clients already use:

    {"mcpServers": {"files": {"command": "npx", "args": ["-y", "..."]},
                    "search": {"url": "http://127.0.0.1:9000/mcp"}}}

Built-in tool names already carry their server (`context_read`); an external
server's tools are namespaced as `server__tool`, so two servers never clash.
A tool that fails, or does not answer within the call timeout, comes back
as a result marked as an error, for the model to read; only a broken
connection raises.
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from memory.errors import BackendError, UsageError
from runtime.action import ToolSpec

__all__ = ["McpHost", "ToolResult", "load_server_config"]

CALL_TIMEOUT_S = 300.0


@dataclass
class ToolResult:
    text: str
    is_error: bool
    structured: Any = None


@dataclass
class _Route:
    client: Client
    remote_name: str


class McpHost:
    """Connects to MCP servers and routes tool calls by name. Use `async with`."""

    def __init__(self, *, call_timeout: float = CALL_TIMEOUT_S) -> None:
        self.call_timeout = call_timeout
        self._stack = AsyncExitStack()
        self._routes: dict[str, _Route] = {}
        self.tools: list[ToolSpec] = []

    async def __aenter__(self) -> McpHost:
        await self._stack.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        try:
            await self._stack.__aexit__(*exc_info)
        except BaseExceptionGroup as group:
            # The MCP clients' task groups wrap an error raised inside `async with`; give it back whole.
            original = exc_info[1]
            if original is not None and _holds(group, original):
                raise original.with_traceback(original.__traceback__) from None
            raise

    async def add(self, name: str, target: MCPServer | StdioServerParameters | str, *, namespace: bool = False) -> None:
        """Connect to `target` (in-process server, stdio command or URL) and take its tools."""
        try:
            client = await self._stack.enter_async_context(Client(target, read_timeout_seconds=self.call_timeout))
            listing = await client.list_tools()
        except Exception as exc:  # any transport failure: name the server, keep the cause
            raise BackendError(f"cannot connect to the MCP server {name!r}: {exc}") from exc
        named = [(f"{name}__{tool.name}" if namespace else tool.name, tool) for tool in listing.tools]
        clashes = [public for public, _ in named if public in self._routes]
        if clashes:
            raise UsageError(f"two MCP servers offer a tool named {clashes[0]!r}; nothing from {name!r} was added")
        for public, tool in named:
            self._routes[public] = _Route(client, tool.name)
            self.tools.append(ToolSpec(public, tool.description or "", tool.input_schema))

    async def add_config(self, path: str | Path) -> None:
        for name, target in load_server_config(path).items():
            await self.add(name, target, namespace=True)

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        route = self._routes.get(name)
        if route is None:
            return ToolResult(f"unknown tool {name!r}", is_error=True)
        try:
            result = await route.client.call_tool(route.remote_name, arguments)
        except MCPError as exc:  # a timeout or an error the server answered: the model reads it, the run goes on
            return ToolResult(f"{name} failed: {exc}", is_error=True)
        text = "\n".join(getattr(part, "text", "") or f"[{part.type} content]" for part in result.content)
        if not text and result.structured_content is not None:
            text = json.dumps(result.structured_content, ensure_ascii=False)
        return ToolResult(text=text, is_error=bool(result.is_error), structured=result.structured_content)


def _holds(group: BaseExceptionGroup, exc: BaseException) -> bool:
    return any(e is exc or (isinstance(e, BaseExceptionGroup) and _holds(e, exc)) for e in group.exceptions)


def load_server_config(path: str | Path) -> dict[str, StdioServerParameters | str]:
    """Read an `mcpServers` file into connection targets; a clear error for anything malformed."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the MCP server file {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise UsageError(f"{path} is not valid JSON: {exc}") from exc
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise UsageError(f"{path} must hold an object with an `mcpServers` object")
    targets: dict[str, StdioServerParameters | str] = {}
    for name, spec in servers.items():
        if isinstance(spec, dict) and isinstance(spec.get("url"), str):
            targets[name] = spec["url"]
        elif isinstance(spec, dict) and isinstance(spec.get("command"), str):
            targets[name] = StdioServerParameters(command=spec["command"], args=list(spec.get("args", [])), env=spec.get("env"))
        else:
            raise UsageError(f"the MCP server {name!r} in {path} needs a `command` or a `url`")
    return targets
