"""`loci serve` over real transports: stdio subprocesses and streamable HTTP on loopback."""

from __future__ import annotations

import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def serve(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "runtime.cli", "serve", *args])


async def test_compat_server_over_stdio_answers_the_reference_tools(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with Client(serve("memory", "--compat", "--db", str(tmp_path / "m.db"))) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            await client.call_tool("create_entities", {"entities": [{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}]})
            found = await client.call_tool("search_nodes", {"query": "Ada"})
    assert {"create_entities", "search_nodes", "open_nodes", "read_graph"} <= names
    assert "Ada" in found.content[0].text and not found.is_error


async def test_full_server_over_stdio_offers_context_memory_and_run_task(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with Client(serve("--db", str(tmp_path / "m.db"))) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            bad = await client.call_tool("context_read", {"id": "doc:404"})
    assert {"context_read", "context_search", "memory_recall", "memory_remember", "run_task"} <= names
    assert bad.is_error and "doc:404" in bad.content[0].text


def served_url(process: subprocess.Popen[bytes], timeout: float = 60) -> str:
    """The URL the server announces on stderr once its socket listens; waits for that line, no longer."""
    assert process.stderr is not None
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0 and select.select([process.stderr], [], [], left)[0]:
        line = process.stderr.readline().decode()
        if not line:
            pytest.fail(f"loci serve exited with {process.wait()} before it served")
        if match := re.search(r"serving MCP on (\S+)", line):
            return match.group(1)
    pytest.fail(f"loci serve did not say where it serves within {timeout:.0f} s")


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "runtime.cli", "serve", "--http", "--port", "0", "--token", "s3cret", "--db", str(tmp_path / "h.db")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, bufsize=0,  # unbuffered: select sees every byte
    )
    try:
        yield served_url(process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()


def test_http_refuses_a_request_without_the_token(http_server: str) -> None:
    response = httpx.post(http_server, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=10)
    assert response.status_code == 401
    assert "bearer token" in response.text


async def test_http_with_the_token_lists_and_calls_tools(http_server: str) -> None:
    http = create_mcp_http_client(headers={"Authorization": "Bearer s3cret"})
    with anyio.fail_after(60):
        async with http, Client(streamable_http_client(http_server, http_client=http)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            added = await client.call_tool("memory_remember", {"text": "the shed code changes monthly", "kind": "semantic"})
    assert "memory_recall" in names
    assert not added.is_error


def test_run_task_reads_files_only_under_its_roots(tmp_path: Path) -> None:
    from memory.errors import UsageError
    from runtime.cli_serve import TaskRunner

    inside, outside = tmp_path / "root", tmp_path / "elsewhere"
    inside.mkdir(), outside.mkdir()
    (inside / "a.md").write_text("a\n", encoding="utf-8")
    (outside / "b.md").write_text("b\n", encoding="utf-8")
    runner = TaskRunner("scripted:none.json", tmp_path / "t.db", [inside])
    assert runner._allowed(str(inside / "a.md")) == (inside / "a.md").resolve()
    with pytest.raises(UsageError, match="outside"):
        runner._allowed(str(outside / "b.md"))
    with pytest.raises(UsageError, match="only under a --root"):
        TaskRunner("scripted:none.json", tmp_path / "t.db", [])._allowed(str(inside / "a.md"))
