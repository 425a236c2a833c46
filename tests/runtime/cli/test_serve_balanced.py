"""Two `loci serve memory --http` over one PostgreSQL database, as behind a load balancer.

With `--stateless` either server answers any call, whichever one the client
initialized with, and both serve the same memory; without it a session is
known to the server that opened it only, which is why a balancer in front of
stateful servers must keep a client on one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from loci.bench.servers.team import TeamClient
from tests.runtime.cli.test_serve_http import Served, start, stop


@pytest.fixture
def two(tmp_path: Path, postgres_url: str, request: pytest.FixtureRequest) -> Iterator[tuple[Served, Served]]:
    flags = ("--stateless",) if request.param else ()
    servers = [start(tmp_path, "memory", *flags, db=postgres_url) for _ in range(2)]
    try:
        yield servers[0], servers[1]
    finally:
        for server in servers:
            stop(server.process)
            assert server.process.stderr is not None
            server.process.stderr.close()


@pytest.mark.parametrize("two", [True], indirect=True)
async def test_stateless_servers_answer_any_call_over_the_same_memory(two: tuple[Served, Served]) -> None:
    first, second = two
    with anyio.fail_after(60):
        async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as http:
            client = TeamClient(http, first.url)
            await client.open()
            written = await client.call("memory_remember", {"text": "the ferry leaves at nine"})
            recalled = await client.call("memory_recall", {"query": "ferry"}, at=second.url)
            again = await client.call("memory_remember", {"text": "the ferry leaves at nine"}, at=second.url)
    assert "mcp-session-id" not in client.headers
    assert not recalled["isError"] and written["structuredContent"]["id"] in str(recalled["structuredContent"])
    assert again["structuredContent"]["id"] == written["structuredContent"]["id"]
    assert again["structuredContent"]["created"] is False  # the same text again is found, never stored twice


@pytest.mark.parametrize("two", [False], indirect=True)
async def test_a_session_is_known_to_the_server_that_opened_it_only(two: tuple[Served, Served]) -> None:
    first, second = two
    with anyio.fail_after(60):
        async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as http:
            client = TeamClient(http, first.url)
            await client.open()
            await client.call("memory_stats", {})
            with pytest.raises(httpx.HTTPStatusError) as refused:
                await client.call("memory_stats", {}, at=second.url)
    assert refused.value.response.status_code == 404
