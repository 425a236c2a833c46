"""Every path of `loci serve` on stdio answers a hostile line as the MCP SDK's own path does, with the line's own id.

Each case is a few lines sent to two `loci serve` processes: one as shipped (the early answers of
servers/transports/ready.py while it loads, then the thin path of
servers/transports/thin.py for the hot calls) and one with
`LOCI_SERVE_EARLY=0 LOCI_SERVE_THIN=0` (every line read by the SDK's transport once the server has loaded).
Both must give the same answers (id and error code), exit 0, and answer every request whose id is valid
with that id; a line whose id is not one (1.5, true, {}) gets what the SDK gives it.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
OPENING = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
MODERN = {
    PROTOCOL_VERSION_META_KEY: "2026-07-28",
    CLIENT_INFO_META_KEY: {"name": "t", "version": "1"},
    CLIENT_CAPABILITIES_META_KEY: {},
}
RECALL = {"name": "memory_recall", "arguments": {"query": "lantern"}, "_meta": MODERN}
LAST = {"jsonrpc": "2.0", "id": "last", "method": "tools/call", "params": {"name": "memory_stats", "arguments": {}}}


def _request(ident: Any, method: str, params: Any = None, jsonrpc: str = "2.0") -> dict[str, Any]:
    return {"jsonrpc": jsonrpc, "id": ident, "method": method} | ({} if params is None else {"params": params})


@dataclass(frozen=True)
class Raw:
    """A line written as it is (no JSON writer nests that deep), and the id it names."""

    id: int | str
    text: str


def _deep(ident: int | str, depth: int, *, id_last: bool = False) -> Raw:
    """A `tools/call` whose `_meta` nests `depth` objects deep (past the JSON parsers' recursion limits), its id
    first or last."""
    named = f'"id": {json.dumps(ident)}'
    head = '{"jsonrpc": "2.0", ' + ("" if id_last else named + ", ") + '"method": "tools/call", "params": {"_meta": '
    tail = ', "name": "memory_stats"}' + (", " + named if id_last else "") + "}"
    return Raw(ident, head + '{"a": ' * depth + "{}" + "}" * depth + tail)


def _initialize(**changes: Any) -> dict[str, Any]:
    return _request(1, "initialize", {key: value for key, value in (HELLO | changes).items() if value is not None})


CASES = {
    "initialize with a list of params": [_request(1, "initialize", [])],
    "initialize with a numeric protocolVersion": [_initialize(protocolVersion=20250618)],
    "initialize without capabilities": [_initialize(capabilities=None)],
    "initialize with capabilities of the wrong shape": [_initialize(capabilities={"roots": {"listChanged": 5}})],
    'initialize as "jsonrpc": "1.0"': [{**_initialize(), "jsonrpc": "1.0"}],
    "initialize with id 1.5": [{**_initialize(), "id": 1.5}],
    "initialize with id true": [{**_initialize(), "id": True}],
    "initialize with id {}": [{**_initialize(), "id": {}}],
    "tools/list with a list of params": [*OPENING, _request(2, "tools/list", [1, 2])],
    'tools/list as "jsonrpc": "1.0"': [*OPENING, _request(2, "tools/list", jsonrpc="1.0")],
    "tools/list with a progress token, as Codex sends it": [
        _request(0, "initialize", HELLO | {"capabilities": {"experimental": {"codex/auth-change": {}}}}),
        OPENING[1],
        _request(1, "tools/list", {"_meta": {"progressToken": 0}}),
        _request(2, "tools/list", {"_meta": {"progressToken": True}}),
    ],
    "ping with id true": [*OPENING, _request(True, "ping")],
    'initialized as "jsonrpc": "1.0", then tools/list': [
        OPENING[0],
        {**OPENING[1], "jsonrpc": "1.0"},
        _request(2, "tools/list"),
    ],
    "a call nested 1,500 deep right after initialize": [*OPENING, _deep(3, 1500)],
    "a call nested 1,100 deep with a string id": [*OPENING, _deep("three", 1100)],
    "a call nested 1,100 deep with its id last": [*OPENING, _deep(4, 1100, id_last=True)],
    "a hot call with id 1.5": [_request(1.5, "tools/call", RECALL)],
    "a hot call with a list of params": [_request(1, "tools/call", [1, 2]), _request(2, "tools/call", RECALL)],
    "a hot call, then one nested 1,200 deep": [_request(5, "tools/call", RECALL), _deep(6, 1200)],
}
SHIPPED = {"LOCI_SERVE_EARLY": "1", "LOCI_SERVE_THIN": "1"}
SDK_ONLY = {"LOCI_SERVE_EARLY": "0", "LOCI_SERVE_THIN": "0"}


def _expected(lines: list[dict[str, Any] | Raw]) -> set[Any]:
    """The ids that must be answered: each request's whose id is an integer or a string."""
    found = {"last"}
    for line in lines:
        ident = line.id if isinstance(line, Raw) else line.get("id")
        if isinstance(ident, int | str) and not isinstance(ident, bool):
            found.add(ident)
    return found


def _exchange(db: Path, env: dict[str, str], lines: list[dict[str, Any] | Raw]) -> tuple[int, list[tuple[str, Any]]]:
    """`loci serve --tools memory`'s exit code and answers (id, error code or "result") to `lines` and `LAST`."""
    command = [sys.executable, "-m", "loci.runtime.cli.main", "serve", "--tools", "memory", "--db", str(db)]
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
        bufsize=0,  # no read-ahead: `select` sees every answer not yet read
    )
    assert process.stdin is not None and process.stdout is not None
    wanted, answers = _expected(lines), []
    try:
        for line in [*lines, LAST]:
            process.stdin.write((line.text if isinstance(line, Raw) else json.dumps(line)).encode() + b"\n")
        process.stdin.flush()
        deadline = time.monotonic() + 60
        while wanted and select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
            if not (raw := process.stdout.readline()):
                break  # the server ended
            message = json.loads(raw)
            wanted.discard(message.get("id"))
            answers.append(
                (json.dumps(message.get("id")), message["error"]["code"] if "error" in message else "result")
            )
        process.stdin.close()
        code = process.wait(timeout=60)
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
    assert not wanted, f"requests never answered with their id: {wanted}; answers {answers}"
    return code, sorted(answers)


@pytest.mark.parametrize("lines", list(CASES.values()), ids=list(CASES))
def test_each_path_answers_a_hostile_line_as_the_sdk_does(tmp_path: Path, lines: list[dict[str, Any] | Raw]) -> None:
    with ThreadPoolExecutor(2) as pool:
        shipped = pool.submit(_exchange, tmp_path / "shipped.db", SHIPPED, lines)
        sdk = pool.submit(_exchange, tmp_path / "sdk.db", SDK_ONLY, lines)
        assert shipped.result() == sdk.result()
    assert shipped.result()[0] == 0
