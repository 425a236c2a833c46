"""`loci serve` over stdio under hostile requests: every request is answered, nothing blocks on a FIFO."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from anyio.streams.text import TextReceiveStream
from mcp import Client

from loci.memory.engines.sqlite.store import Store
from loci.servers.app import build_app

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}


def _nested(depth: int) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for _ in range(depth):
        meta = {"a": meta}
    return meta


async def _exchange(db: Path, lines: list[str], answers: int) -> dict[Any, dict[str, Any]]:
    """Send `lines` to `loci serve --tools memory` over stdio; the first `answers` responses, by id."""
    command = [sys.executable, "-m", "loci.runtime.cli.main", "serve", "--tools", "memory", "--db", str(db)]
    got: dict[Any, dict[str, Any]] = {}
    async with await anyio.open_process(command, env=os.environ.copy()) as process:
        assert process.stdin is not None and process.stdout is not None
        await process.stdin.send("".join(line + "\n" for line in lines).encode())
        with anyio.fail_after(60):
            buffer = ""
            async for chunk in TextReceiveStream(process.stdout):
                buffer += chunk
                *complete, buffer = buffer.split("\n")
                for line in complete:
                    message = json.loads(line)
                    got[message.get("id")] = message
                if len(got) >= answers:
                    break
        await process.stdin.aclose()
        with anyio.fail_after(30):
            await process.wait()
    return got


async def test_a_request_nested_past_the_parser_limit_gets_an_error_with_its_id(tmp_path: Path) -> None:
    deep = {"name": "memory_remember", "arguments": {"text": "x", "metadata": _nested(200)}}
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": deep}),
        "{not json",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_stats"}}),
    ]
    got = await _exchange(tmp_path / "loci.db", lines, answers=4)
    assert got[1]["error"]["code"] == -32700 and "recursion limit" in got[1]["error"]["message"]
    assert got[None]["error"]["code"] == -32700  # a line with no readable id: JSON-RPC's null id
    assert got[2]["result"]["structuredContent"]["nodes"] == 0


async def test_metadata_nested_past_the_limit_is_a_tool_error(store: Store) -> None:
    async with Client(build_app(store, ["memory"])) as client:
        deep = await client.call_tool("memory_remember", {"text": "a fact", "metadata": _nested(150)})
        stats = await client.call_tool("memory_stats", {})
    assert deep.is_error and "nested deeper than 100 levels" in deep.content[0].text
    assert stats.structured_content["nodes"] == 0


async def test_context_load_refuses_a_fifo_inside_the_root_without_opening_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    os.mkfifo(root / "pipe.md")
    (root / "notes.md").write_text("The backups run at two.\n", encoding="utf-8")
    async with Client(build_app(tmp_path / "loci.db", ["context"], roots=[root])) as client:
        with anyio.fail_after(30):
            pipe = await client.call_tool("context_load", {"path": "pipe.md"})
            folder = await client.call_tool("context_load", {"path": "."})
    assert pipe.is_error and "a FIFO" in pipe.content[0].text and "not a regular file" in pipe.content[0].text
    assert not folder.is_error and "notes.md" in folder.content[0].text
