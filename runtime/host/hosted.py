"""One external MCP server, kept alive: connected by its own task, restarted when it dies.

The host's task group runs `Hosted.supervise`, which owns the connection
(`async with Client(...)`), so opening and closing it happen in one task
whatever calls it. A call that finds the connection broken, or a server that
does not answer a probe after a timed-out call, marks it dead: the caller
gets an error result at once, and the supervisor closes the connection and
starts it again after a backoff (`BACKOFF_S`, doubling), up to
`MAX_RESTARTS` times. Past that the server stays `failed` and every call to
it says so.

Tool lists are fetched on each (re)connection and again whenever the server
says they changed (a `subscriptions/listen` stream on 2026-07-28
connections, `notifications/tools/list_changed` before), so tools a server
adds or removes reach the agent's next turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Tool, ToolListChangedNotification

from loci.runtime.host.config import ServerSpec

__all__ = ["BACKOFF_S", "MAX_RESTARTS", "Hosted"]

log = logging.getLogger("loci.host")

MAX_RESTARTS = 3
BACKOFF_S = 0.25
MAX_BACKOFF_S = 5.0
PING_TIMEOUT_S = 5.0


class Hosted:
    """An external server's connection, status and current tools."""

    def __init__(self, spec: ServerSpec, *, call_timeout: float, on_tools: Callable[[], None] = lambda: None) -> None:
        self.spec = spec
        self.call_timeout = spec.timeout or call_timeout
        self.on_tools = on_tools
        self.client: Client | None = None
        self.status = "starting"
        self.error: str | None = None
        self.restarts = 0
        self.tools: list[Tool] = []
        self._changed = anyio.Event()
        self._down = anyio.Event()
        self._closing = False

    async def supervise(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect, serve until the connection dies, restart with backoff; report the first attempt's end."""
        started = False
        while not self._closing:
            try:
                async with AsyncExitStack() as stack:
                    client = await stack.enter_async_context(self._client(stack))

                    def running(client: Client = client) -> None:
                        nonlocal started
                        self.client, self.error = client, None
                        self._set_status("running")
                        if not started:
                            started = True
                            task_status.started()

                    await self._serve(client, running)
            except Exception as exc:  # the server would not start, or broke: note why, then maybe restart
                self.error = _describe(exc)
                log.info("MCP server %s: %s", self.spec.name, self.error)
            self.client = None
            if self._closing:
                break
            if not started:  # the first connection failed: the caller decides what that means
                self._set_status("failed")
                task_status.started()
                return
            if self.restarts >= MAX_RESTARTS:
                self._set_status("failed")
                return
            self._set_status("restarting")
            await anyio.sleep(min(BACKOFF_S * 2**self.restarts, MAX_BACKOFF_S))
            self.restarts += 1

    def _client(self, stack: AsyncExitStack) -> Client:
        spec = self.spec
        handler = self._on_message
        if spec.url is None:
            return Client(spec.target, read_timeout_seconds=self.call_timeout, message_handler=handler)
        http = httpx2.AsyncClient(headers=spec.headers, timeout=httpx2.Timeout(30.0, read=self.call_timeout))
        stack.push_async_callback(http.aclose)
        transport = streamable_http_client(spec.url, http_client=http)
        return Client(transport, read_timeout_seconds=self.call_timeout, message_handler=handler)

    async def _serve(self, client: Client, running: Callable[[], None]) -> None:
        """Listen for tool changes, list the tools, then wait until the connection is declared dead or closed."""
        self._down = anyio.Event()
        async with anyio.create_task_group() as group:
            await group.start(self._listen, client)
            await self._refresh(client)
            running()
            await self._down.wait()
            group.cancel_scope.cancel()

    async def _listen(self, client: Client, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Refresh the tools on each change event; ready once the stream is acknowledged (or refused)."""
        listening = False
        try:
            async with client.listen(tools_list_changed=True) as events:
                listening = True
                task_status.started()
                async for _ in events:
                    await self._refresh(client)
        except Exception as exc:  # noqa: BLE001 - the notifications still tell of changes; say why the stream ended
            if listening:
                log.warning("MCP server %s: its tool-change stream broke: %s", self.spec.name, _describe(exc))
            else:  # a server without the stream: `notifications/tools/list_changed` does the job
                log.debug("MCP server %s offers no tool-change stream: %s", self.spec.name, _describe(exc))
                task_status.started()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, ToolListChangedNotification) and self.client is not None:
            await self._refresh(self.client)

    async def _refresh(self, client: Client) -> None:
        listing = await client.list_tools(cache_mode="refresh")
        self.tools = [tool for tool in listing.tools if self.spec.permits(tool.name)]
        self.on_tools()

    async def ready(self) -> Client | None:
        """The live client, waiting for a restart in progress (within the call timeout); None if down for good."""
        with anyio.move_on_after(self.call_timeout):
            while self.status not in ("running", "failed", "closed"):
                await self._changed.wait()
        return self.client if self.status == "running" else None

    async def check(self, client: Client) -> None:
        """After a timed-out call: a server that does not answer a listing in time is hung, and restarted."""
        try:
            with anyio.fail_after(PING_TIMEOUT_S):  # `ping` is gone in 2026-07-28: a fresh listing probes instead
                await client.list_tools(cache_mode="refresh")
        except TimeoutError:
            self.mark_dead(f"it did not answer a tool listing within {PING_TIMEOUT_S:g}s")
        except Exception as exc:  # noqa: BLE001 - whatever broke the probe, the server is restarted; keep why
            self.mark_dead(f"its tool listing failed: {_describe(exc)}")

    def mark_dead(self, why: str) -> None:
        """Declare the connection dead (`why` is kept as the server's error): the supervisor restarts it."""
        if self.status == "running":
            log.info("MCP server %s: %s; restarting it", self.spec.name, why)
            self.error = why
            self._set_status("restarting")
        self._down.set()

    def close(self) -> None:
        self._closing = True
        self._set_status("closed")
        self._down.set()

    def _set_status(self, status: str) -> None:
        """Change the status and wake everyone waiting in `ready`."""
        self.status = status
        woken, self._changed = self._changed, anyio.Event()
        woken.set()


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
