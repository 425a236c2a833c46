"""`loci serve` on stdio answers its first questions at once, as the real server would, then hands over."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream

from loci.runtime.cli.listing import listing
from loci.runtime.cli.main import VERSION
from loci.runtime.cli.serve import SERVED, tool_sets
from loci.runtime.models.specs import DEFAULT_SPEC
from loci.servers.transports.ready import LISTING_PATH, Listing


async def test_the_shipped_listing_is_what_the_server_answers_now() -> None:
    shipped, now = Listing.load(), await listing()
    assert shipped.initialize == now.initialize, f"run `python -m loci.runtime.cli.listing` to rewrite {LISTING_PATH}"
    assert shipped.tools == now.tools, f"run `python -m loci.runtime.cli.listing` to rewrite {LISTING_PATH}"


def test_the_served_names_are_the_tool_sets_given_to_the_server() -> None:
    assert tuple(tool_sets()) == SERVED
    assert set(Listing.load().tools) == set(SERVED)
    assert DEFAULT_SPEC == "llama:default"


async def _serve(tmp_path: Path, lines: list[dict], answers: int, *args: str, early: bool = True) -> list[dict]:
    """`loci serve ARGS` given `lines` at once; the first `answers` lines it writes back, then its input is closed."""
    command = [sys.executable, "-m", "loci.runtime.cli.main", "serve", "--db", str(tmp_path / "loci.db"), *args]
    env = {**os.environ, "LOCI_SERVE_EARLY": "1" if early else "0"}
    got = []
    with anyio.fail_after(300):
        async with await anyio.open_process(command, stderr=subprocess.DEVNULL, env=env) as process:
            assert process.stdin is not None and process.stdout is not None
            await process.stdin.send("".join(json.dumps(line) + "\n" for line in lines).encode())
            out = BufferedByteReceiveStream(process.stdout)
            for _ in range(answers):
                got.append(json.loads(await out.receive_until(b"\n", 1 << 22)))
            await process.stdin.aclose()
            assert await process.wait() == 0
    return got


OPEN = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}


async def test_early_answers_and_the_servers_own_arrive_once_each(tmp_path: Path) -> None:
    remember = {"name": "memory_remember", "arguments": {"text": "the harbour gate opens at six"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": OPEN},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": remember},
        {"jsonrpc": "2.0", "id": 4, "method": "resources/templates/list"},
    ]
    answers = {answer["id"]: answer for answer in await _serve(tmp_path, lines, 4)}
    assert sorted(answers) == [1, 2, 3, 4]
    assert answers[1]["result"]["serverInfo"] == {"name": "loci", "version": VERSION}
    assert [tool["name"] for tool in answers[2]["result"]["tools"]] == [
        tool["name"] for name in SERVED for tool in Listing.load().tools[name]
    ]
    assert not answers[3]["result"].get("isError") and "mem:1" in json.dumps(answers[3]["result"])
    assert answers[4]["result"]["resourceTemplates"]


async def test_the_early_answers_are_the_loaded_servers_for_any_flags_and_version(tmp_path: Path) -> None:
    older = {**OPEN, "protocolVersion": "2025-03-26"}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": older},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    flags = ("--root", str(tmp_path), "--tools", "memory,run", "--project", "shop", "--model", "scripted:none")
    early = await _serve(tmp_path, lines, 2, *flags)
    loaded = await _serve(tmp_path, lines, 2, *flags, early=False)
    assert early == loaded and early[0]["result"]["protocolVersion"] == "2025-03-26"


async def test_a_client_that_leaves_after_its_answers_ends_the_server(tmp_path: Path) -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": OPEN},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    assert [answer["id"] for answer in await _serve(tmp_path, lines, 2)] == [1, 2]


async def test_a_server_that_cannot_open_its_home_ends_with_one_line_while_the_client_waits(tmp_path: Path) -> None:
    (tmp_path / "loci.db").mkdir()
    command = [sys.executable, "-m", "loci.runtime.cli.main", "serve", "--db", str(tmp_path / "loci.db")]
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": OPEN},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    with anyio.fail_after(300):
        async with await anyio.open_process(command) as process:
            assert process.stdin is not None and process.stderr is not None
            await process.stdin.send("".join(json.dumps(line) + "\n" for line in lines).encode())
            code = await process.wait()  # the client's input stays open: the server must end on its own
            said = (await process.stderr.receive()).decode()
    assert code == 2 and said.startswith("loci: ") and said.count("\n") == 1 and "directory" in said
