"""`loci serve --http` on a free loopback port: tokens, Origin, body size, binding, progress and cancellation."""

from __future__ import annotations

import json
import re
import select
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.runtime.cli_helpers import script

TOKEN = "s3cret-token-value"
TOY = Path(__file__).parents[1] / "host" / "toy_server.py"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass
class Served:
    url: str
    db: Path
    process: subprocess.Popen[bytes]

    def log(self) -> str:
        """What the server wrote on stderr after its first line (call once it has stopped)."""
        assert self.process.stderr is not None
        return self.process.stderr.read().decode(errors="replace")


def start(tmp_path: Path, *extra: str, db: Path | None = None) -> Served:
    """`loci serve --http` over `db` (a new home in `tmp_path` unless given) on a free port, once it says where it
    serves (it listens by then)."""
    db = db or tmp_path / "h.db"
    command = [sys.executable, "-m", "loci.runtime.cli.main", "serve", "--http", "--port", "0", "--db", str(db), *extra]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, bufsize=0)
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    while (left := deadline - time.monotonic()) > 0 and select.select([process.stderr], [], [], left)[0]:
        line = process.stderr.readline().decode()
        if not line:
            pytest.fail(f"loci serve exited with {process.wait()} before it served")
        if match := re.search(r"serving MCP on (\S+)", line):
            return Served(match.group(1), db, process)
    stop(process)
    pytest.fail("loci serve --http did not say where it serves within 60 s")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[Served]:
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n", encoding="utf-8")
    served = start(tmp_path, "--token-file", str(token), "--access-log")
    try:
        yield served
    finally:
        stop(served.process)
        served.process.stderr.close()


def post(url: str, headers: dict[str, str], body: bytes | None = None) -> httpx.Response:
    content = body if body is not None else json.dumps(INIT).encode()
    return httpx.post(url, content=content, headers={**ACCEPT, **headers}, timeout=10)


def test_no_token_or_a_wrong_token_gets_401_and_the_right_one_in_any_case_works(http_server: Served) -> None:
    missing = post(http_server.url, {})
    wrong = post(http_server.url, {"Authorization": "Bearer nope"})
    basic = post(http_server.url, {"Authorization": f"Basic {TOKEN}"})
    right = post(http_server.url, {"Authorization": f"Bearer {TOKEN}"})
    lower = post(http_server.url, {"Authorization": f"bearer {TOKEN}"})
    assert [r.status_code for r in (missing, wrong, basic)] == [401, 401, 401]
    assert "bearer token" in missing.text
    assert right.status_code == 200 and lower.status_code == 200


def test_a_bad_origin_or_host_is_refused(http_server: Served) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    origin = post(http_server.url, {**auth, "Origin": "http://evil.example"})
    host = post(http_server.url, {**auth, "Host": "evil.example"})
    good = post(http_server.url, {**auth, "Origin": http_server.url.removesuffix("/mcp")})
    assert (origin.status_code, host.status_code) == (403, 421)
    assert good.status_code == 200


def test_an_oversized_body_is_refused(http_server: Served) -> None:
    huge = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "' + b"x" * (5 * 1024 * 1024) + b'"}}'
    response = post(http_server.url, {"Authorization": f"Bearer {TOKEN}"}, huge)
    assert response.status_code == 413


def test_the_access_log_never_shows_the_token(http_server: Served) -> None:
    post(http_server.url, {"Authorization": f"Bearer {TOKEN}"})
    post(http_server.url, {"Authorization": "Bearer wrong-guess"})
    stop(http_server.process)
    log = http_server.log()
    assert "POST /mcp" in log
    assert TOKEN not in log and "wrong-guess" not in log


def test_a_non_loopback_bind_without_a_token_refuses_to_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOCI_TOKEN", raising=False)
    command = [
        sys.executable,
        "-m",
        "loci.runtime.cli.main",
        "serve",
        "--http",
        "--host",
        "0.0.0.0",
        "--db",
        str(tmp_path / "x.db"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "refusing to serve 0.0.0.0 without a token" in done.stderr


async def test_run_task_reports_progress_and_a_cancel_leaves_it_cancelled(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"toy": {"command": sys.executable, "args": [str(TOY)]}}}))
    model = script(
        tmp_path,
        [
            {"state": "", "tool": "context_list", "arguments": {}},
            {"state": "looked", "tool": "toy__hang", "arguments": {}},
        ],
    )
    served = start(tmp_path, "--model", model, "--mcp-config", str(config))
    progress: list[tuple[float, str | None]] = []
    first_turn = anyio.Event()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))
        first_turn.set()

    try:
        async with Client(served.url) as client:
            with anyio.fail_after(120):
                async with anyio.create_task_group() as group:
                    group.start_soon(
                        lambda: client.call_tool("run_task", {"task": "wait"}, progress_callback=on_progress)
                    )
                    await first_turn.wait()
                    group.cancel_scope.cancel()
                run = await wait_for_status(client, "loci://runs/1", "cancelled")
    finally:
        stop(served.process)
        served.process.stderr.close()
    assert progress[0][0] == 1 and "turn 1" in (progress[0][1] or "") and "tokens" in (progress[0][1] or "")
    assert run["status"] == "cancelled" and run["finished"] is not None
    assert [turn["turn"] for turn in run["turns"]] == [value for value, _ in progress]  # the turns it made
    with sqlite3.connect(served.db) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT status FROM runs").fetchall() == [("cancelled",)]


async def wait_for_status(client: Client, uri: str, status: str) -> dict:
    with anyio.fail_after(60):
        while True:
            record = json.loads((await client.read_resource(uri)).contents[0].text)
            if record["status"] == status:
                return record
            await anyio.sleep(0.05)


async def test_a_client_with_the_token_lists_and_calls_tools(http_server: Served) -> None:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    with anyio.fail_after(60):
        async with http, Client(streamable_http_client(http_server.url, http_client=http)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            added = await client.call_tool("memory_remember", {"text": "the shed code changes monthly"})
    assert {"memory_recall", "context_read", "run_task"} <= names
    assert not added.is_error and added.structured_content["id"] == "mem:1"
