"""A 401 a client can show: why, where a token comes from, and RFC 9728 metadata saying there is no OAuth to start."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx

from loci.memory.engines.sqlite.store import Store
from loci.servers.auth.bearer import METADATA_PATH
from loci.servers.transports.transport import http_app

TOKEN = "a-server-token-of-some-length"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}


def _no_server(project: str, read_only: bool) -> Any:
    raise AssertionError("a refused request never reaches a server")


def _params(header: str) -> dict[str, str]:
    assert header.startswith("Bearer ")
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


async def _requests(tmp_path: Path, *calls: tuple[str, str, dict[str, str]]) -> list[httpx.Response]:
    async with await Store.open(tmp_path / "loci.db") as store:
        app = http_app(_no_server, store=store, project="default", host="127.0.0.1", token=TOKEN)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
            return [await http.request(method, path, json=INIT, headers=headers) for method, path, headers in calls]


async def test_a_401_says_why_and_where_a_token_comes_from_and_points_at_the_metadata(tmp_path: Path) -> None:
    missing, wrong = await _requests(
        tmp_path, ("POST", "/mcp", {}), ("POST", "/mcp", {"Authorization": "Bearer not-the-token-at-all"})
    )
    assert missing.status_code == wrong.status_code == 401
    told, wrongly = _params(missing.headers["www-authenticate"]), _params(wrong.headers["www-authenticate"])
    assert "needs a bearer token" in told["error_description"] and "loci tokens add" in told["error_description"]
    assert "wrong or revoked" in wrongly["error_description"] and told["error"] == "invalid_token"
    assert told["resource_metadata"] == f"http://127.0.0.1:8765{METADATA_PATH}/mcp"


async def test_the_protected_resource_metadata_is_served_without_a_token_and_names_no_authorization_server(
    tmp_path: Path,
) -> None:
    [plain, scoped] = await _requests(tmp_path, ("GET", METADATA_PATH, {}), ("GET", f"{METADATA_PATH}/p/shop/mcp", {}))
    assert plain.status_code == scoped.status_code == 200
    assert plain.json()["resource"] == "http://127.0.0.1:8765/mcp"
    assert scoped.json()["resource"] == "http://127.0.0.1:8765/p/shop/mcp"
    assert plain.json()["bearer_methods_supported"] == ["header"] and "authorization_servers" not in plain.json()
