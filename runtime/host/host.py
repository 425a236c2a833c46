"""The MCP host: the runtime is a client of every server its agent may use.

Built-in servers (`context`, `memory`, `history`) are `MCPServer` instances
connected in-process (no framing, the fastest path); external servers come
from an `mcpServers` file (`runtime.host.config`), each kept alive by its own
supervising task (`runtime.host.hosted`: restarts with backoff, tool lists
refreshed when they change).

Built-in tool names already carry their server (`context_read`); an external
server's tools are namespaced as `server__tool`, so two servers never clash.
A tool that fails, does not answer within the call timeout, or whose server
crashed comes back as a result marked as an error, for the model to read;
the run goes on, and a crashed server is started again behind it.
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from loci.memory.errors import BackendError, UsageError
from loci.runtime.host.config import ServerSpec, load_server_config
from loci.runtime.host.hosted import Hosted

__all__ = ["McpHost", "ServerSpec", "ToolResult", "ToolSpec", "load_server_config"]

CALL_TIMEOUT_S = 300.0
SEP = "__"


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it: its (namespaced) name, description and input schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass
class ToolResult:
    text: str
    is_error: bool
    structured: Any = None


class McpHost:
    """Connects to MCP servers and routes tool calls by name. Use `async with`."""

    def __init__(self, *, call_timeout: float = CALL_TIMEOUT_S) -> None:
        self.call_timeout = call_timeout
        self._stack = AsyncExitStack()
        self._local: dict[str, tuple[Client, str, ToolSpec]] = {}
        self.hosted: dict[str, Hosted] = {}
        self._group: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> McpHost:
        await self._stack.__aenter__()
        self._group = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(self._stop_hosted)
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

    def _stop_hosted(self) -> None:
        for hosted in self.hosted.values():
            hosted.close()
        if self._group is not None:
            self._group.cancel_scope.cancel()

    @property
    def tools(self) -> list[ToolSpec]:
        """Every tool the agent may call now: the built-in ones, then each external server's, namespaced."""
        specs = [spec for _, _, spec in self._local.values()]
        for name, hosted in self.hosted.items():
            specs += [ToolSpec(f"{name}{SEP}{t.name}", t.description or "", t.input_schema) for t in hosted.tools]
        return specs

    async def add(self, name: str, target: MCPServer | Any) -> None:
        """Connect in-process to `target` (a built-in server, or any `Server`) and take its tools."""
        try:
            client = await self._stack.enter_async_context(Client(target, read_timeout_seconds=self.call_timeout))
            listing = await client.list_tools()
        except Exception as exc:  # any transport failure: name the server, keep the cause
            raise BackendError(f"cannot connect to the MCP server {name!r}: {exc}") from exc
        known = {spec.name for spec in self.tools}
        clashes = [tool.name for tool in listing.tools if tool.name in known]
        if clashes:
            raise UsageError(f"two MCP servers offer a tool named {clashes[0]!r}; nothing from {name!r} was added")
        for tool in listing.tools:
            self._local[tool.name] = (client, tool.name, ToolSpec(tool.name, tool.description or "", tool.input_schema))

    async def add_server(self, spec: ServerSpec, *, strict: bool = True) -> Hosted:
        """Start an external server under supervision; with `strict`, one that will not start is an error."""
        if spec.name in self.hosted or SEP in spec.name:
            raise UsageError(f"the MCP server name {spec.name!r} is taken or contains {SEP!r}")
        assert self._group is not None, "use McpHost inside `async with`"
        hosted = Hosted(spec, call_timeout=self.call_timeout)
        self.hosted[spec.name] = hosted
        await self._group.start(hosted.supervise)
        if hosted.status == "failed" and strict:
            raise BackendError(f"cannot connect to the MCP server {spec.name!r}: {hosted.error}")
        return hosted

    async def add_config(self, path: str | Path, *, strict: bool = True) -> None:
        for spec in load_server_config(path).values():
            await self.add_server(spec, strict=strict)

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if name in self._local:
            client, remote, _ = self._local[name]
            return await self._call(client, name, remote, arguments)
        server, _, remote = name.partition(SEP)
        hosted = self.hosted.get(server)
        if hosted is None or not any(tool.name == remote for tool in hosted.tools):
            return ToolResult(f"unknown tool {name!r}", is_error=True)
        client = await hosted.ready()
        if client is None:
            return ToolResult(f"{name} failed: the MCP server {server!r} is down ({hosted.error})", is_error=True)
        result = await self._call(client, name, remote, arguments, hosted)
        return result

    async def _call(
        self, client: Client, name: str, remote: str, arguments: dict[str, Any], hosted: Hosted | None = None
    ) -> ToolResult:
        try:
            result = await client.call_tool(remote, arguments)
        except MCPError as exc:  # an error the server answered, a timeout or a dead connection: the run goes on
            if hosted is None:
                return ToolResult(f"{name} failed: {exc}", is_error=True)
            if exc.error.code == REQUEST_TIMEOUT:
                await hosted.check(client)  # a server that no longer answers a ping is restarted
            elif exc.error.code == CONNECTION_CLOSED:
                hosted.mark_dead("its connection closed")
                return ToolResult(f"{name} failed: the MCP server {hosted.spec.name!r} stopped; restarting it", True)
            return ToolResult(f"{name} failed: {exc}", is_error=True)
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            if hosted is None:
                raise
            hosted.mark_dead(f"its connection broke: {type(exc).__name__}")
            return ToolResult(f"{name} failed: the MCP server {hosted.spec.name!r} stopped; restarting it", True)
        text = "\n".join(getattr(part, "text", "") or f"[{part.type} content]" for part in result.content)
        if not text and result.structured_content is not None:
            text = json.dumps(result.structured_content, ensure_ascii=False)
        return ToolResult(text=text, is_error=bool(result.is_error), structured=result.structured_content)


def _holds(group: BaseExceptionGroup, exc: BaseException) -> bool:
    return any(e is exc or (isinstance(e, BaseExceptionGroup) and _holds(e, exc)) for e in group.exceptions)
