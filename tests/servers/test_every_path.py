"""Every path of `loci serve` on stdio answers a hostile line as the MCP SDK's own path does, with the line's own id.

Each case is a few lines sent to two `loci serve` processes: one as shipped (the early answers of
servers/transports/ready.py while it loads, then the thin path of
servers/transports/thin.py for the hot calls) and one with
`LOCI_SERVE_EARLY=0 LOCI_SERVE_THIN=0` (every line read by the SDK's transport once the server has loaded).
Both must give the same answers (id, error code and message), exit 0, and answer every request whose id is
valid with that id; a request whose id is not one (1.5, true, {}, [], null) gets, as JSON-RPC 2.0 says, an Invalid
Request (-32600) with a null id, on every path (servers/transports/request_ids.py), where the SDK alone would read it
as a notification and never answer.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
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
    """A line written as it is (no JSON writer nests that deep, or spells a key with an escape), and the id it names
    (None: an id that is not a valid one)."""

    id: int | str | None
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
    "ping with id null": [*OPENING, _request(None, "ping")],
    "tools/list with id [1]": [*OPENING, _request([1], "tools/list")],
    "initialize with id true, then a plain one and tools/list": [
        {**_initialize(), "id": True},
        *OPENING,
        _request(2, "tools/list"),
    ],
    "an id spelled with an escape, 1.0": [*OPENING, Raw(None, '{"jsonrpc": "2.0", "\\u0069d": 1.0, "method": "ping"}')],
    'initialized as "jsonrpc": "1.0", then tools/list': [
        OPENING[0],
        {**OPENING[1], "jsonrpc": "1.0"},
        _request(2, "tools/list"),
    ],
    "a call nested 1,500 deep right after initialize": [*OPENING, _deep(3, 1500)],
    "a call nested 1,100 deep with a string id": [*OPENING, _deep("three", 1100)],
    "a call nested 1,100 deep with its id last": [*OPENING, _deep(4, 1100, id_last=True)],
    "a hot call with id 1.5": [_request(1.5, "tools/call", RECALL)],
    "a hot call with id {} after a hot call": [_request(1, "tools/call", RECALL), _request({}, "tools/call", RECALL)],
    "a hot call with a list of params": [_request(1, "tools/call", [1, 2]), _request(2, "tools/call", RECALL)],
    "a hot call, then one nested 1,200 deep": [_request(5, "tools/call", RECALL), _deep(6, 1200)],
}
SHIPPED = {"LOCI_SERVE_EARLY": "1", "LOCI_SERVE_THIN": "1"}
SDK_ONLY = {"LOCI_SERVE_EARLY": "0", "LOCI_SERVE_THIN": "0"}


def _valid(ident: object) -> bool:
    return isinstance(ident, int | str) and not isinstance(ident, bool)


def _expected(lines: list[dict[str, Any] | Raw]) -> set[Any]:
    """The ids that must be answered: each request's whose id is an integer or a string."""
    found = {"last"}
    for line in lines:
        ident = line.id if isinstance(line, Raw) else line.get("id")
        if _valid(ident):
            found.add(ident)
    return found


def _invalid(lines: list[dict[str, Any] | Raw]) -> int:
    """How many of `lines` are requests whose id is not a valid one (each answered -32600 with a null id)."""
    return sum(
        (line.id is None) if isinstance(line, Raw) else ("id" in line and not _valid(line["id"])) for line in lines
    )


Answer = tuple[str, Any, str]  # the id as JSON, the error code or "result", the error's message


def _exchange(db: Path, env: dict[str, str], lines: list[dict[str, Any] | Raw]) -> tuple[int, list[Answer]]:
    """`loci serve --tools memory`'s exit code and answers (id, error code or "result", message) to `lines` and
    `LAST`, once every request with a valid id and as many with an invalid one are answered."""
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
    wanted, nulls, answers = _expected(lines), _invalid(lines), []
    deadline = time.monotonic() + 60

    def answered() -> bool:
        """Read one answer (False: none came in time, or the server ended)."""
        if not select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
            return False
        if not (raw := process.stdout.readline()):  # type: ignore[union-attr]
            return False
        message = json.loads(raw)
        wanted.discard(message.get("id"))
        error = message.get("error", {})
        answers.append((json.dumps(message.get("id")), error.get("code", "result"), error.get("message", "")))
        return True

    try:
        for line in [*lines, LAST]:
            process.stdin.write((line.text if isinstance(line, Raw) else json.dumps(line)).encode() + b"\n")
        process.stdin.flush()
        # Every request answered while the client's input is still open, as a client waiting for them keeps it.
        while (wanted or sum(answer[:2] == ("null", -32600) for answer in answers) < nulls) and answered():
            pass
        process.stdin.close()
        while answered():  # the rest, to the end: the server ends once its input has, every answer written
            pass
        code = process.wait(timeout=60)
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
    assert not wanted, f"requests never answered with their id: {wanted}; answers {answers}"
    invalid = [answer for answer in answers if answer[:2] == ("null", -32600) and "its id is" in answer[2]]
    assert len(invalid) == nulls, f"{nulls} requests with an invalid id, answered {invalid}; answers {answers}"
    return code, sorted(answers, key=json.dumps)


@pytest.mark.parametrize("lines", list(CASES.values()), ids=list(CASES))
def test_each_path_answers_a_hostile_line_as_the_sdk_does(tmp_path: Path, lines: list[dict[str, Any] | Raw]) -> None:
    with ThreadPoolExecutor(2) as pool:
        shipped = pool.submit(_exchange, tmp_path / "shipped.db", SHIPPED, lines)
        sdk = pool.submit(_exchange, tmp_path / "sdk.db", SDK_ONLY, lines)
        assert shipped.result() == sdk.result()
    assert shipped.result()[0] == 0


def _over_http(db: Path, thin: str) -> list[tuple[int, Any]]:
    """What `loci serve --http` answers a request with each invalid id, in a handshake session and in the modern era,
    as (HTTP status, JSON-RPC message), then the other hostile shapes (HTTP status, body)."""
    env = {**os.environ, "LOCI_SERVE_THIN": thin, "LOCI_TOKEN": "every-path-token-0123"}
    command = [sys.executable, "-m", "loci.runtime.cli.main", "serve", "--http", "--port", "0", "--db", str(db)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, bufsize=0)
    assert process.stderr is not None
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {env['LOCI_TOKEN']}",
        "Content-Type": "application/json",
    }
    try:
        deadline, url = time.monotonic() + 60, None
        while url is None and select.select([process.stderr], [], [], max(0.0, deadline - time.monotonic()))[0]:
            found = re.search(r"serving MCP on (\S+)", process.stderr.readline().decode() or "ended")
            url = found.group(1) if found else None
        assert url is not None, "loci serve --http did not serve"
        with httpx.Client(headers=headers, timeout=60) as http:
            opened = http.post(url, json={**OPENING[0], "params": HELLO})
            session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
            http.post(url, json=OPENING[1], headers=session)
            modern = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "memory_recall"}
            answers = []
            for ident in (1.5, True, {}, None):
                for sent, extra in (
                    (_request(ident, "tools/list"), session),
                    (_request(ident, "tools/call", RECALL), modern),
                ):
                    response = http.post(url, json=sent, headers=extra)
                    answers.append((response.status_code, response.json()))
            # The other hostile shapes: answered as the SDK answers them, thin path or not.
            others = [
                (_request(1, "initialize", []), {}),
                (_initialize(protocolVersion=20250618), {}),
                (_request(2, "tools/list", jsonrpc="1.0"), session),
                (_request(3, "tools/list", [1, 2]), session),
                ({**_request(4, "tools/call", RECALL), "jsonrpc": "1.0"}, modern),
                (_request(5, "tools/call", [1, 2]), modern),
            ]
            for sent, extra in others:
                response = http.post(url, json=sent, headers=extra)
                answers.append((response.status_code, response.text if response.content else ""))
        return answers
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stderr.close()


def test_each_http_path_answers_a_hostile_request_alike(tmp_path: Path) -> None:
    with ThreadPoolExecutor(2) as pool:
        thin = pool.submit(_over_http, tmp_path / "thin.db", "1")
        sdk = pool.submit(_over_http, tmp_path / "sdk.db", "0")
        assert thin.result() == sdk.result()
    for status, answer in thin.result()[:8]:
        assert status == 400 and answer["id"] is None and answer["error"]["code"] == -32600, answer
