"""A response's head leaves with its body in one write; a streamed response's head never waits for its first event."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import anyio
import uvicorn

from loci.servers.transports.one_write import OneWriteHttp

REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


class _Recorded(asyncio.Transport):
    """What a protocol wrote, write by write (the seam under the protocol: a transport)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 8000)}.get(name, default)


async def _served(app: Any, exchange: Any) -> None:
    """`exchange(reader, writer)` against `app` served by uvicorn with `OneWriteHttp` on a loopback port."""
    listening = socket.create_server(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    config = uvicorn.Config(app, http=OneWriteHttp, ws="none", lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [listening])
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                await exchange(reader, writer)
            finally:
                writer.close()
                await writer.wait_closed()
                server.should_exit = True


async def test_a_streamed_responses_head_reaches_the_client_before_its_first_event() -> None:
    event = anyio.Event()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await event.wait()  # the client sets it once it has read the head: a held head would never arrive
        await send({"type": "http.response.body", "body": b"data: one\n\n", "more_body": False})

    async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(REQUEST)
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"transfer-encoding: chunked" in head
        event.set()
        assert b"data: one" in await reader.readuntil(b"0\r\n\r\n")

    await _served(app, exchange)


async def test_a_whole_response_is_written_once() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"5")]})
        await send({"type": "http.response.body", "body": b"hello"})

    transport = _Recorded()
    config = uvicorn.Config(app, http=OneWriteHttp, ws="none", lifespan="off", log_level="warning")
    config.load()
    protocol = OneWriteHttp(config, uvicorn.server.ServerState(), app_state={})
    with anyio.fail_after(30):
        protocol.connection_made(transport)
        protocol.data_received(REQUEST)
        while not transport.writes:
            await anyio.lowlevel.checkpoint()
    assert len(transport.writes) == 1
    assert transport.writes[0].startswith(b"HTTP/1.1 200 OK\r\n") and transport.writes[0].endswith(b"\r\n\r\nhello")
