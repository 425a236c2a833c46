"""`loci serve` over a home this process cannot write (an immutable file in an immutable folder, as a read-only
mount or another user's home is): it serves reads over stdio and HTTP, and each write says why it cannot be done."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import anyio
import httpx
from mcp import Client, StdioServerParameters

from loci.bench.servers.mcp import http_server
from loci.bench.servers.team import TeamClient
from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph
from tests.memory.broken_homes import immutable


async def _home(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "loci.db"
    path.parent.mkdir()
    async with await Store.open(path) as store:
        await Graph(store).remember("the harbor master keeps the spare keys")
    return path


@contextmanager
def _read_only(path: Path) -> Iterator[Path]:
    with ExitStack() as stack:
        stack.enter_context(immutable(path))
        stack.enter_context(immutable(path.parent))  # no WAL beside it either
        yield path


async def test_a_read_only_home_is_served_for_reading_over_stdio(tmp_path: Path) -> None:
    path = await _home(tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "loci.runtime.cli.main", "serve", "--tools", "memory", "--db", str(path)]
    )
    with _read_only(path), anyio.fail_after(90):
        async with Client(params) as client:
            got = await client.call_tool("memory_get", {"id": "mem:1"})
            recalled = await client.call_tool("memory_recall", {"query": "spare keys"})
            stats = await client.call_tool("memory_stats", {})
            refused = await client.call_tool("memory_remember", {"text": "a new fact"})
    assert not got.is_error and "harbor master" in got.structured_content["text"]
    assert not recalled.is_error and "harbor master" in str(recalled.structured_content)
    assert not stats.is_error and stats.structured_content["nodes"] == 1
    assert refused.is_error and "read-only" in refused.content[0].text


async def test_a_read_only_home_is_served_for_reading_over_http(tmp_path: Path) -> None:
    path = await _home(tmp_path)
    with _read_only(path), http_server(path) as (url, token), anyio.fail_after(60):
        async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as http:
            client = TeamClient(http, url, token)
            await client.open()
            got = await client.call("memory_get", {"id": "mem:1"})
            refused = await client.call("memory_remember", {"text": "a new fact"})
    assert not got.get("isError") and "harbor master" in got["structuredContent"]["text"]
    assert refused["isError"] and "read-only" in refused["content"][0]["text"]
