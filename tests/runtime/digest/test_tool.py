"""The `digest` MCP tool: in process with progress notifications, and served by `loci serve` over stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from loci.runtime.digest.tool import DigestTool
from tests.runtime.digest_helpers import write_doc


def script(path: Path, replies: list[str]) -> str:
    path.write_text(json.dumps(replies), encoding="utf-8")
    return f"scripted:{path}"


async def test_digest_tool_streams_with_progress_notifications(tmp_path: Path) -> None:
    write_doc(tmp_path / "log.txt", lines=12)
    server = MCPServer(name="test")
    # 12 lines of 10 words: two chunks of 64 tokens.
    spec = script(tmp_path / "r.json", ["[1] nothing", "[1] nothing", "no code"])
    server.add_tool(DigestTool(spec, tmp_path / "loci.db", [tmp_path]).digest)
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    with anyio.fail_after(60):
        async with Client(server) as client:
            arguments = {"paths": ["log.txt"], "question": "Code?", "strategy": "stream", "chunk_tokens": 64}
            result = await client.call_tool("digest", arguments, progress_callback=progress)
    assert not result.is_error, result.content
    record = result.structured_content
    assert record["answer"] == "no code" and record["strategy"] == "stream" and record["model_calls"] == 3
    assert (60, 120, "job 1 stream: chunk 1/2, 1 model calls") in seen and seen[-1][0] == 120


async def test_digest_tool_refuses_a_file_outside_the_roots(tmp_path: Path) -> None:
    (tmp_path / "inside").mkdir()
    server = MCPServer(name="test")
    server.add_tool(DigestTool("scripted:none.json", tmp_path / "loci.db", [tmp_path / "inside"]).digest)
    outside = write_doc(tmp_path / "log.txt")
    with anyio.fail_after(60):
        async with Client(server) as client:
            result = await client.call_tool("digest", {"paths": [str(outside)], "question": "Code?"})
    assert result.is_error and "outside the allowed roots" in result.content[0].text


async def test_loci_serve_offers_digest_over_stdio(tmp_path: Path) -> None:
    write_doc(tmp_path / "log.txt")
    spec = script(tmp_path / "r.json", ["7316"])
    command = [
        "-m",
        "loci.runtime.cli.main",
        "serve",
        "--db",
        str(tmp_path / "loci.db"),
        "--root",
        str(tmp_path),
        "--model",
        spec,
    ]
    with anyio.fail_after(60):
        async with Client(StdioServerParameters(command=sys.executable, args=command)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            result = await client.call_tool("digest", {"paths": ["log.txt"], "question": "Code?"})
    assert {"digest", "run_task"} <= names
    assert not result.is_error and result.structured_content["answer"] == "7316"
