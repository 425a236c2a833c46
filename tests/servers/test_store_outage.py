"""A tool call while the home's database is unavailable gets a JSON-RPC error that says so, on every path.

Real `loci serve` processes over one home: two over stdio (a connection of the 2026-07-28 era, whose hot call takes
the thin path of servers/transports/thin.py and whose other calls the SDK's modern loop serves; and a handshake
connection, which the SDK serves throughout) and one over streamable HTTP (a modern hot call on
servers/transports/thin_http.py, a modern call of another tool on the SDK's single-exchange entry, and a handshake
session on the SDK's session transport). The outage is real: the PostgreSQL cluster stopped with `pg_ctl stop`, or
another connection's SQLite `BEGIN IMMEDIATE` held past `LOCI_BUSY_TIMEOUT`. Each path's write is then answered
with the error code `STORE_UNAVAILABLE`, a message that says why and a retry hint in `data`; once the database is
back, the same calls succeed on the same processes, which never logged a traceback.
"""

from __future__ import annotations

import json
import os
import re
import select
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

from loci.bench.servers.postgres_cluster import running_cluster
from loci.servers.errors import RETRY_AFTER_S, STORE_UNAVAILABLE
from tests.conftest import new_database

MODERN = {
    PROTOCOL_VERSION_META_KEY: "2026-07-28",
    CLIENT_INFO_META_KEY: {"name": "t", "version": "1"},
    CLIENT_CAPABILITIES_META_KEY: {},
}
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
WAIT_S = 60.0  # the longest any answer, or a server's start, is waited for
TOKEN = "outage-test-token-0123456789"


@dataclass
class Outage:
    """A home, how to make its database unavailable and bring it back, and what the error then says."""

    db: str
    begin: Callable[[], None]
    end: Callable[[], None]
    says: str
    env: dict[str, str] = field(default_factory=dict)


@contextmanager
def _postgresql(tmp_path: Path) -> Iterator[Outage]:
    with running_cluster() as cluster:
        yield Outage(
            new_database(cluster.url),
            lambda: cluster.pg_ctl("stop", "-m", "fast"),
            lambda: cluster.pg_ctl("start"),
            "the database is unavailable",
        )


@contextmanager
def _sqlite(tmp_path: Path) -> Iterator[Outage]:
    db = tmp_path / "loci.db"
    holder: list[sqlite3.Connection] = []

    def begin() -> None:  # another process's write lock, as `sqlite3` or a backup would hold it
        holder.append(sqlite3.connect(db, isolation_level=None))
        holder[0].execute("BEGIN IMMEDIATE")

    def end() -> None:
        holder[0].execute("COMMIT")
        holder[0].close()

    yield Outage(str(db), begin, end, "locked by another process", {"LOCI_BUSY_TIMEOUT": "0.5"})


class Logged:
    """A `loci serve` process, its stderr read by a thread into `lines` (so a full pipe never stops it)."""

    def __init__(self, args: list[str], env: dict[str, str], stdin: bool) -> None:
        command = [sys.executable, "-m", "loci.runtime.cli.main", "serve", *args]
        pipe = subprocess.PIPE if stdin else subprocess.DEVNULL
        self.process = subprocess.Popen(command, stdin=pipe, stdout=pipe, stderr=subprocess.PIPE, env=env, bufsize=0)
        self.lines: list[str] = []
        self.said = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self.lines.append(raw.decode(errors="replace"))
            self.said.set()

    def stop(self) -> str:
        """Stop the process; what it logged."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join(timeout=15)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return "".join(self.lines)


class Stdio:
    """A stdio connection: `call(tool, arguments)` sends one request and returns the message that answers it."""

    def __init__(self, served: Logged, modern: bool) -> None:
        self.served = served
        self.modern = modern
        self.next = 0
        if not modern:
            self._ask({"method": "initialize", "params": HELLO})
            self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": tool, "arguments": arguments} | ({"_meta": MODERN} if self.modern else {})
        return self._ask({"method": "tools/call", "params": params})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.served.process.stdin is not None
        try:
            self.served.process.stdin.write(json.dumps(message).encode() + b"\n")
        except BrokenPipeError:
            self.served.process.wait(timeout=WAIT_S)
            self.served.reader.join(timeout=WAIT_S)
            raise AssertionError(f"the server ended: {''.join(self.served.lines)[-3000:]}") from None

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        self.next += 1
        self._send({"jsonrpc": "2.0", "id": self.next, **request})
        out, deadline = self.served.process.stdout, time.monotonic() + WAIT_S
        assert out is not None
        while select.select([out], [], [], max(0.0, deadline - time.monotonic()))[0]:
            message = json.loads(out.readline() or b"null")
            assert message is not None, f"the server ended: {''.join(self.served.lines)[-2000:]}"
            if message.get("id") == self.next:
                return message
        raise TimeoutError(f"request {self.next} was not answered within {WAIT_S} s")


class Http:
    """A streamable HTTP client of one era: `call(tool, arguments)` returns the message that answers the request."""

    def __init__(self, url: str, modern: bool) -> None:
        self.url = url
        self.modern = modern
        self.next = 0
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {TOKEN}",
            "Content-Type": "application/json",
        }
        if modern:
            self.headers["MCP-Protocol-Version"] = "2026-07-28"
            return
        session = self._post({"method": "initialize", "params": HELLO}, {}).headers["mcp-session-id"]
        self.headers |= {"mcp-session-id": session, "mcp-protocol-version": HELLO["protocolVersion"]}
        httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers)

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": tool, "arguments": arguments} | ({"_meta": MODERN} if self.modern else {})
        routing = {"Mcp-Method": "tools/call", "Mcp-Name": tool} if self.modern else {}
        response = self._post({"method": "tools/call", "params": params}, routing)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return json.loads([line[5:] for line in response.text.splitlines() if line.startswith("data:")][-1])
        return response.json()

    def _post(self, request: dict[str, Any], extra: dict[str, str]) -> httpx.Response:
        self.next += 1
        body = {"jsonrpc": "2.0", "id": self.next, **request}
        response = httpx.post(self.url, json=body, headers=self.headers | extra, timeout=WAIT_S)
        response.raise_for_status()
        return response


def _serving(served: Logged) -> str:
    """The URL a `loci serve --http` process says it serves on."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if match := re.search(r"serving MCP on (\S+)", "".join(served.lines)):
            return match.group(1)
        served.said.clear()
        if served.process.poll() is not None:
            break
        served.said.wait(max(0.0, deadline - time.monotonic()))
    raise AssertionError(f"loci serve --http did not serve: {''.join(served.lines)[-2000:]}")


Path_ = tuple[str, Any, str]  # what it is called in a failure, its client, and the tool it calls


def _paths(outage: Outage, stack: ExitStack) -> tuple[list[Path_], list[Logged]]:
    env = {**os.environ, **outage.env, "LOCI_TOKEN": TOKEN, "LOCI_SERVE_THIN": "1"}
    memory = ["--tools", "memory", "--db", outage.db]
    modern, handshake = Logged(memory, env, True), Logged(memory, env, True)
    http = Logged(["--http", "--port", "0", *memory], env, False)
    for served in (modern, handshake, http):
        stack.callback(served.stop)
    url = _serving(http)
    on_modern, on_handshake = Stdio(modern, True), Stdio(handshake, False)
    http_modern, http_handshake = Http(url, True), Http(url, False)
    paths = [
        ("stdio, the thin path", on_modern, "memory_remember"),
        ("stdio, the SDK's modern loop", on_modern, "memory_update"),
        ("stdio, a handshake connection", on_handshake, "memory_remember"),
        ("HTTP, the thin path", http_modern, "memory_remember"),
        ("HTTP, the SDK's single-exchange entry", http_modern, "memory_update"),
        ("HTTP, a handshake session", http_handshake, "memory_remember"),
    ]
    return paths, [modern, handshake, http]


def _arguments(tool: str, n: int, known: str) -> dict[str, Any]:
    text = f"the lantern note {n}"
    return {"id": known, "text": text} if tool == "memory_update" else {"text": text}


def _stored(answer: dict[str, Any]) -> bool:
    return "result" in answer and not answer["result"].get("isError")


def _after(client: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The call's answer once the database is back: asked again, after the pause each error asks for, until it is
    not that error (or `WAIT_S` has passed)."""
    deadline = time.monotonic() + WAIT_S
    answer = client.call(tool, arguments)
    while "error" in answer and answer["error"]["code"] == STORE_UNAVAILABLE and time.monotonic() < deadline:
        time.sleep(answer["error"]["data"]["retryAfter"])  # what a client is told to do
        answer = client.call(tool, arguments)
    return answer


def _unavailable(name: str, answer: dict[str, Any], says: str) -> None:
    assert "error" in answer, f"{name}: {answer}"
    error = answer["error"]
    assert error["code"] == STORE_UNAVAILABLE and says in error["message"], f"{name}: {error}"
    assert error["data"]["retryAfter"] == RETRY_AFTER_S, f"{name}: {error}"


@pytest.mark.parametrize("engine", [_postgresql, _sqlite], ids=["postgresql stopped", "sqlite locked"])
def test_a_tool_call_while_the_database_is_away_gets_a_json_rpc_error(tmp_path: Path, engine: Any) -> None:
    with engine(tmp_path) as outage, ExitStack() as stack:
        paths, processes = _paths(outage, stack)
        first = paths[0][1].call("memory_remember", {"text": "the lantern is green"})
        assert _stored(first), first
        known = first["result"]["structuredContent"]["id"]
        # Each path served once before: every server has loaded (a server that starts during an outage is another
        # matter), and each write path works.
        before = [client.call(tool, _arguments(tool, 200 + n, known)) for n, (_, client, tool) in enumerate(paths)]
        assert all(_stored(answer) for answer in before), before
        outage.begin()
        try:
            during = [client.call(tool, _arguments(tool, n, known)) for n, (_, client, tool) in enumerate(paths)]
        finally:
            outage.end()
        for (name, _, _), answer in zip(paths, during, strict=True):
            _unavailable(name, answer, outage.says)
        after = [_after(client, tool, _arguments(tool, 100 + n, known)) for n, (_, client, tool) in enumerate(paths)]
        assert all(_stored(answer) for answer in after), after
        assert all(served.process.poll() is None for served in processes)
        logs = [served.stop() for served in processes]
    assert not any("Traceback" in log for log in logs), logs
