"""The benchmark's hand-written MCP client: a real `loci serve --http` answers it, and a reply it cannot read is one
`WireError`, never a hang or a foreign exception."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from anyio.abc import SocketStream

from loci.bench.servers.mcp import http_server
from loci.bench.servers.wire import WireClient, WireError


async def test_a_real_server_answers_the_wire_client_and_refuses_a_wrong_token(tmp_path: Path) -> None:
    with http_server(tmp_path / "loci.db") as (url, token):
        with anyio.fail_after(60):
            async with WireClient.connect(url, token) as client:
                await client.open()
                stored = await client.call("memory_remember", {"text": "the wire client stores a note"})
                found = await client.call("memory_recall", {"query": "wire client note", "k": 5})
            async with WireClient.connect(url, "not-the-token") as stranger:
                with pytest.raises(WireError, match="refused: HTTP/1.1 401"):
                    await stranger.open()
    assert stored["isError"] is False and stored["structuredContent"]["id"].startswith("mem:")
    assert "the wire client stores a note" in str(found["structuredContent"])


async def _answering(reply: bytes, check: Callable[[WireClient], object]) -> None:
    """`check` run on a client of a listener that answers every request with `reply`, then closes."""

    async def serve(stream: SocketStream) -> None:
        async with stream:
            await stream.receive()
            await stream.send(reply)

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    with anyio.fail_after(10):
        async with listener, anyio.create_task_group() as group:
            group.start_soon(listener.serve, serve)
            async with WireClient.connect(f"http://127.0.0.1:{port}/mcp") as client:
                await check(client)  # type: ignore[misc]
            group.cancel_scope.cancel()


async def test_a_json_body_by_its_length_is_read_as_the_answer() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"result":{"isError":false,"structuredContent":{"id":"mem:7"}}}'
    reply = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)

    async def check(client: WireClient) -> None:
        assert (await client.call("memory_remember", {"text": "x"}))["structuredContent"] == {"id": "mem:7"}

    await _answering(reply, check)


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (b'HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n{"jsonrpc"', "ended mid-answer"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", "malformed"),
        (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 5\r\n\r\nnope!", "malformed"),
        (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}", "no result"),
        (b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n", "refused: HTTP/1.1 503"),
    ],
)
async def test_a_reply_the_client_cannot_read_is_one_wire_error(reply: bytes, said: str) -> None:
    async def check(client: WireClient) -> None:
        with pytest.raises(WireError, match=said):
            await client.call("memory_recall", {"query": "x"})

    await _answering(reply, check)
