"""HTTP under hostile clients: abandoned sessions are capped and expire, Origin means scheme, host and port,
the page sends its security headers, and the page and the MCP server hold tokens to the same rules."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import pytest

from loci.memory.engines.sqlite.store import Store
from loci.servers.ui.app import build_ui_app
from tests.runtime.cli.test_serve_http import ACCEPT, INIT, post, start, stop
from tests.runtime.cli_helpers import loci

PAGE = "http://127.0.0.1:8780"


def _open_session(url: str) -> httpx.Response:
    return post(url, {})


def test_http_sessions_are_capped_and_an_idle_one_expires(tmp_path: Path) -> None:
    served = start(tmp_path, "--max-sessions", "2", "--session-idle", "1")
    try:
        first, second, third = (_open_session(served.url) for _ in range(3))
        assert (first.status_code, second.status_code, third.status_code) == (200, 200, 503)
        old = first.headers["mcp-session-id"]

        async def until_admitted() -> httpx.Response:
            # No sleep: each try is a real request; the two sessions expire after a second with none in flight.
            with anyio.fail_after(30):
                while (fresh := await anyio.to_thread.run_sync(_open_session, served.url)).status_code == 503:
                    pass
            return fresh

        fresh = anyio.run(until_admitted)
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        gone = httpx.post(served.url, content=json.dumps(ping), headers={**ACCEPT, "mcp-session-id": old}, timeout=10)
        assert fresh.status_code == 200 and gone.status_code == 404
    finally:
        stop(served.process)
        served.process.stderr.close()


def test_the_mcp_server_refuses_another_port_of_its_own_host_as_origin(tmp_path: Path) -> None:
    served = start(tmp_path)
    try:
        own = served.url.removesuffix("/mcp")
        port = int(own.rsplit(":", 1)[1])
        other_port = post(served.url, {"Origin": f"http://127.0.0.1:{port + 1}"})
        dev_server = post(served.url, {"Origin": "http://localhost:3000"})
        https = post(served.url, {"Origin": own.replace("http:", "https:")})
        same = post(served.url, {"Origin": own})
    finally:
        stop(served.process)
        served.process.stderr.close()
    assert [r.status_code for r in (other_port, dev_server, https)] == [403, 403, 403]
    assert same.status_code == 200 and json.loads(same.text.split("data: ", 1)[-1])["id"] == INIT["id"]


async def _page(store: Store, *requests: tuple[str, str, dict[str, str]]) -> list[httpx.Response]:
    token = "p" * 32
    app = build_ui_app(store, host="127.0.0.1", token=token, token_for_reads=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=PAGE) as http:
        return [await http.request(method, path, headers=headers) for method, path, headers in requests]


async def test_the_page_refuses_another_port_as_origin_and_sends_its_security_headers(store: Store) -> None:
    index, refused, own, other = await _page(
        store,
        ("GET", "/", {}),
        ("POST", "/api/runs/1/feedback", {}),
        ("GET", "/api/runs", {"origin": PAGE}),
        ("GET", "/api/runs", {"origin": "http://127.0.0.1:3000"}),
    )
    assert (index.status_code, refused.status_code, own.status_code, other.status_code) == (200, 401, 200, 403)
    for response in (index, refused, other):
        policy = response.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy and "'unsafe-inline'" not in policy
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"


@pytest.mark.parametrize("command", ["ui", "serve"])
def test_a_short_token_off_loopback_is_refused_by_the_page_and_the_server_alike(tmp_path: Path, command: str) -> None:
    token = tmp_path / "token"
    token.write_text("short-token\n", encoding="utf-8")
    extra = ["--http"] if command == "serve" else []
    done = loci(command, *extra, "--host", "0.0.0.0", "--port", "0", "--token-file", str(token), home=tmp_path)
    assert done.returncode == 2 and "11-character token: use at least 16" in done.stderr, done.stderr
