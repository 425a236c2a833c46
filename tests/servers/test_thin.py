"""The thin path answers the hot tool calls with the SDK path's bytes, over stdio and HTTP, and leaves the rest alone.

Each comparison runs the same requests, one at a time, through two `loci serve` processes over copies of one home:
one as shipped, one with `LOCI_SERVE_THIN=0` (every request on the MCP SDK's own path), and compares what the client
reads, byte for byte: results, tool errors, protocol errors, the handshake era's answers.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph, NewNode
from loci.servers.transports.thin import AVAILABLE, HOT_TOOLS, ThinLines, hot_call
from tests.runtime.cli.test_serve_http import stop

MODERN = {
    PROTOCOL_VERSION_META_KEY: "2026-07-28",
    CLIENT_INFO_META_KEY: {"name": "t", "version": "1"},
    CLIENT_CAPABILITIES_META_KEY: {},
}
FACTS = ["The harbour lantern is green", "Ada keeps the lantern oil in the shed", "The shed is behind the harbour"]


def _call(ident: int | str, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> dict:
    params = {"name": name, "arguments": arguments, "_meta": MODERN if meta is None else meta}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


CALLS = [
    _call(1, "memory_recall", {"query": "harbour lantern", "k": 3}),
    _call("two", "memory_remember", {"text": "The lantern was lit at dusk"}),
    _call(3, "memory_recall", {"query": "lantern dusk"}),
    _call(4, "memory_recall", {"query": "lantern", "k": "many"}),  # the arguments fail the schema: an error result
    _call(5, "memory_recall", {}),
    _call(6, "memory_remember", {"text": "   "}),  # Loci's own error, as a result
    _call(7, "context_search", {"query": "lantern"}),
    _call(8, "memory_recall", {"query": "é ünïcode 𝄞 \u2028 lantern"}),
    _call(9, "memory_recall", {"query": "lantern"}, {**MODERN, PROTOCOL_VERSION_META_KEY: "2099-01-01"}),
    _call(10, "memory_recall", {"query": "lantern"}, {PROTOCOL_VERSION_META_KEY: "2026-07-28"}),  # half an envelope
    _call(11, "memory_get", {"id": "mem:999"}),  # not a hot tool: the SDK's path both ways
]
COMPAT_CALLS = [
    _call(1, "create_entities", {"entities": [{"name": "Ada", "entityType": "person", "observations": FACTS[:2]}]}),
    _call(2, "create_entities", {"entities": [{"name": "Shed", "entityType": "place", "observations": FACTS[2:]}]}),
    _call(3, "create_relations", {"relations": [{"from": "Ada", "to": "Shed", "relationType": "keeps oil in"}]}),
    _call(4, "add_observations", {"observations": [{"entityName": "Ada", "contents": ["Ada lights it at dusk"]}]}),
    _call(5, "search_nodes", {"query": "Ada"}),
    _call(6, "search_nodes", {"query": "lantern"}),
    _call(7, "open_nodes", {"names": ["Ada", "Shed", "Nobody"]}),
    _call(8, "create_entities", {"entities": "Ada"}),
    _call(9, "add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}),
    _call(10, "search_nodes", {}),
]
# Headers that the SDK's entry checks before it dispatches, on a hot call: each answered the same both ways.
ODD_HEADERS = [
    [("Host", "elsewhere.example:80")],  # refused by the transport's DNS-rebinding check
    [("Mcp-Name", "memory_remember")],  # the routing header disagrees with the body
    [("Mcp-Name", "memory_recall"), ("Mcp-Name", "memory_recall")],  # a routing header twice
    [("Mcp-Param-Query", "lantern")],  # a parameter header the tool does not declare
    [("Accept", "text/event-stream")],  # a stream accepted, not JSON: refused
    [("Accept", "application/json")],  # JSON alone, where the app's entry streams: refused as it refuses it
]
HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_recall", "arguments": {}}},
    _call(3, "memory_recall", {"query": "lantern"}),  # an envelope on a handshake connection: refused by the SDK
]


def _home(tmp_path: Path) -> Path:
    db = tmp_path / "home.db"

    async def seed() -> None:
        async with await Store.open(db) as store:
            await Graph(store).add_many([NewNode(text) for text in FACTS], cause="test")

    anyio.run(seed)
    return db


def _env(thin: bool) -> dict[str, str]:
    return {**os.environ, "LOCI_SERVE_THIN": "1" if thin else "0"}


def _readline(stream: Any, deadline: float) -> bytes:
    if not select.select([stream], [], [], max(0.0, deadline - time.monotonic()))[0]:
        raise TimeoutError("the server did not answer within 60 s")
    return stream.readline()


def _over_stdio(db: Path, thin: bool, messages: list[dict], *serve: str) -> list[bytes]:
    """What `loci serve` writes for each of `messages` (sent one at a time; a notification gets no answer)."""
    command = [sys.executable, "-m", "loci.runtime.cli.main", "serve", *serve, "--db", str(db)]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env(thin), bufsize=0
    )
    assert process.stdin is not None and process.stdout is not None
    answers = []
    try:
        for message in messages:
            process.stdin.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
            if "id" in message:
                answers.append(_readline(process.stdout, time.monotonic() + 60))
    finally:
        process.stdin.close()
        process.wait(timeout=60)
        process.stdout.close()
    return answers


def _both(tmp_path: Path, run: Any) -> tuple[Any, Any]:
    db = _home(tmp_path)
    shutil.copy(db, tmp_path / "sdk.db")
    return run(db, True), run(tmp_path / "sdk.db", False)


def test_hot_calls_over_stdio_get_the_sdk_paths_bytes(tmp_path: Path) -> None:
    thin, sdk = _both(tmp_path, lambda db, on: _over_stdio(db, on, CALLS, "--tools", "context,memory"))
    assert thin == sdk
    replies = [json.loads(line) for line in thin]
    assert "lantern" in json.dumps(replies[0]["result"]["structuredContent"])  # a real recall, not an empty one
    assert replies[3]["result"]["isError"] and "error" in replies[8] and "error" in replies[9]


def test_the_compatible_servers_hot_calls_over_stdio_get_the_sdk_paths_bytes(tmp_path: Path) -> None:
    thin, sdk = _both(tmp_path, lambda db, on: _over_stdio(db, on, COMPAT_CALLS, "memory", "--compat"))
    assert thin == sdk
    assert "Ada lights it at dusk" in json.loads(thin[4])["result"]["content"][0]["text"]


def test_a_handshake_connection_keeps_the_sdk_path(tmp_path: Path) -> None:
    thin, sdk = _both(tmp_path, lambda db, on: _over_stdio(db, on, HANDSHAKE, "--tools", "memory"))
    assert thin == sdk
    assert json.loads(thin[2])["error"]["code"] == -32600


def _over_http(db: Path, thin: bool) -> list[tuple[int, str, bytes]]:
    command = [sys.executable, "-m", "loci.runtime.cli.main", "serve", "--http", "--port", "0", "--db", str(db)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(thin), bufsize=0)
    assert process.stderr is not None
    try:
        deadline = time.monotonic() + 60
        while not (match := re.search(r"serving MCP on (\S+)", _readline(process.stderr, deadline).decode())):
            pass
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2026-07-28",
        }
        answers = []
        for message in CALLS:
            named = {**headers, "Mcp-Method": message["method"], "Mcp-Name": message["params"]["name"]}
            response = httpx.post(match.group(1), content=json.dumps(message), headers=named, timeout=60)
            answers.append((response.status_code, response.headers["content-type"], response.content))
        for odd in ODD_HEADERS:
            names = {name for name, _ in odd}
            named = [*(h for h in headers.items() if h[0] not in names), ("Mcp-Method", "tools/call"), *odd]
            if not any(name == "Mcp-Name" for name, _ in odd):
                named.append(("Mcp-Name", "memory_recall"))
            response = httpx.post(match.group(1), content=json.dumps(CALLS[0]), headers=named, timeout=60)
            answers.append((response.status_code, response.headers.get("content-type", ""), response.content))
        return answers
    finally:
        stop(process)
        process.stderr.close()


def test_hot_calls_over_http_get_the_sdk_paths_bytes(tmp_path: Path) -> None:
    thin, sdk = _both(tmp_path, _over_http)
    assert thin == sdk
    assert [status for status, _, _ in thin[:8]] == [200] * 8 and b"lantern" in thin[0][2]
    statuses = [status for status, _, _ in thin[-len(ODD_HEADERS) :]]
    assert statuses[:3] == [421, 400, 400] and statuses[-2:] == [406, 406]


def test_the_installed_sdk_has_what_the_thin_path_calls() -> None:
    """Without the SDK's single-request driver the thin path turns itself off: with this SDK it must be on."""
    assert AVAILABLE and "memory_recall" in HOT_TOOLS


def test_only_plain_modern_calls_of_hot_tools_take_the_thin_path() -> None:
    assert hot_call(CALLS[0]) and hot_call(CALLS[1])
    progress = _call(1, "memory_recall", {"query": "x"}, {**MODERN, "progressToken": 7})
    extra = {**CALLS[0], "params": {**CALLS[0]["params"], "task": {}}}
    legacy = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_recall", "arguments": {}}}
    for message in (CALLS[10], progress, extra, legacy, {**CALLS[0], "id": True}, {**CALLS[0], "id": 1.5}):
        assert not hot_call(message)


async def test_no_hot_tool_takes_a_context_so_none_sends_a_notification(store: Store) -> None:
    from loci.servers.app import build_app
    from loci.servers.memory_compat import build_compat_server

    app = build_app(store, ["context", "memory"])
    async with app.lifespan(app) as state:
        servers = [*state.sets.values(), build_compat_server(store)]
        hot = [tool for server in servers for tool in await server.list_tools() if tool.name in HOT_TOOLS]
        assert {tool.name for tool in hot} == HOT_TOOLS
        for server in servers:
            for tool in await server.list_tools():
                if tool.name in HOT_TOOLS:
                    assert server._tool_manager.get_tool(tool.name).context_kwarg is None  # noqa: SLF001


class LinesOut:
    """A served connection's output, kept as one string."""

    def __init__(self) -> None:
        self.text = ""

    async def write(self, text: str) -> None:
        self.text += text

    async def flush(self) -> None:
        return None


async def _through(store: Store, lines: list[str]) -> tuple[list[str], str]:
    """What the SDK would read of `lines` after the thin path, and what was written (the thin path's answers, and an
    empty result standing for the SDK's answer to a hot call that opened the era, which the thin path waits for)."""
    from loci.servers.app import build_app

    server = build_app(store, ["memory"])

    async def source() -> Any:
        for line in lines:
            yield line

    out = LinesOut()
    with anyio.fail_after(30):
        async with server.lifespan(server) as state, anyio.create_task_group() as group:
            thin = ThinLines(server, state, source(), out)
            passed = []
            async for line in thin.lines(group):
                passed.append(line)
                if (ident := json.loads(line).get("id")) == thin.opening:  # the SDK's answer to the opening call
                    await thin.writer.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": {}}) + "\n")
    return passed, out.text


async def test_the_sdk_never_reads_a_call_the_thin_path_answers(store: Store) -> None:
    lines = [json.dumps(message) for message in CALLS[:3] + CALLS[10:]]
    passed, written = await _through(store, lines)
    # The first call opens the era, which the SDK decides on the first request it reads: it serves that one.
    assert passed == [lines[0], *lines[3:]]
    assert {json.loads(line)["id"] for line in written.splitlines()} == {1, "two", 3}


async def test_a_connection_opened_by_a_line_read_otherwise_keeps_the_sdk_path(store: Store) -> None:
    # Python's parser reads NaN, the SDK's does not: the era such a line opens is the SDK's to say.
    opening = json.dumps(CALLS[0]).replace('"k": 3', '"k": NaN')
    for first in (opening, json.dumps(HANDSHAKE[0])):
        lines = [first, json.dumps(CALLS[2])]
        assert await _through(store, lines) == (lines, "")


async def test_a_request_whose_id_is_not_valid_is_answered_and_decides_no_era(store: Store) -> None:
    lines = [json.dumps({**CALLS[0], "id": ident}) for ident in (None, 1.5, True, {}, [])]
    passed, written = await _through(store, [*lines, json.dumps(CALLS[2]), json.dumps(CALLS[1])])
    assert passed == [json.dumps(CALLS[2])]  # the era is opened by the first valid request, which the SDK reads
    answers = [json.loads(line) for line in written.splitlines()]
    assert [answer["id"] for answer in answers[:5]] == [None] * 5 and {a["id"] for a in answers[5:]} == {3, "two"}
    assert {answer["error"]["code"] for answer in answers[:5]} == {-32600}
