"""`loci serve --http` over a home with tokens, on a real loopback port: each token reaches its projects only.

A token of project `a` cannot read, search, list, read as a resource (the
export an MCP client has) or write project `b`; a token of both chooses one by
the path; a read-only token cannot write; a revoked token is refused on its
next request (`--token-cache 0`); the server's own `--token-file` still works.
Each test runs over a SQLite home and a PostgreSQL one (`token_home`), but
that of the compatible server, which keeps its home in SQLite so far.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from loci.memory.engines.select import use_engine
from loci.memory.errors import UsageError
from loci.memory.records.tokens import Tokens
from loci.servers.auth.bearer import check_bind
from loci.servers.transports.transport import http_app
from tests.runtime.cli.test_serve_http import INIT as INIT_BODY
from tests.runtime.cli.test_serve_http import TOKEN, Served, post, start, stop
from tests.servers.tokens_home import TokenHome, revoke


def serving(tmp_path: Path, home: TokenHome) -> Iterator[Served]:
    owner = tmp_path / "owner-token"
    owner.write_text(TOKEN + "\n", encoding="utf-8")
    server = start(tmp_path, "--token-cache", "0", "--token-file", str(owner), db=home.db)
    try:
        yield server
    finally:
        stop(server.process)
        assert server.process.stderr is not None
        server.process.stderr.close()


@pytest.fixture
def served(tmp_path: Path, token_home: TokenHome) -> Iterator[Served]:
    yield from serving(tmp_path, token_home)


@asynccontextmanager
async def connected(url: str, token: str) -> AsyncIterator[Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        yield client


def at(served: Served, project: str) -> str:
    return served.url.replace("/mcp", f"/p/{project}/mcp")


async def test_a_token_of_a_reads_searches_lists_and_exports_a_only(served: Served, token_home: TokenHome) -> None:
    with anyio.fail_after(60):
        async with connected(served.url, token_home.tokens["alice"]) as client:
            recalled = await client.call_tool("memory_recall", {"query": "vault code"})
            stats = await client.call_tool("memory_stats", {})
            resources = await client.list_resources()
            own = await client.read_resource(f"loci://memory/{token_home.memories['a']}")
            other_memory = await client.call_tool("memory_get", {"id": token_home.memories["b"]})
            other_links = await client.call_tool("memory_neighbors", {"id": token_home.memories["b"]})
    seen = json.dumps([recalled.structured_content, stats.structured_content])
    assert "alpha" in seen and "bravo" not in seen
    uris = " ".join(str(r.uri) for r in resources.resources)
    assert token_home.memories["a"] in uris and token_home.memories["b"] not in uris
    assert "alpha" in own.contents[0].text
    assert other_memory.is_error and other_links.is_error
    assert "bravo" not in json.dumps([other_memory.content[0].text, other_links.content[0].text])


async def test_a_token_of_a_reads_searches_and_lists_the_documents_and_runs_of_a_only(
    served: Served, token_home: TokenHome
) -> None:
    home = token_home
    with anyio.fail_after(60):
        async with connected(served.url, home.tokens["alice"]) as client:
            searched = await client.call_tool("context_search", {"query": "vault code"})
            listed = await client.call_tool("context_list", {})
            resources = await client.list_resources()
            other_document = await client.call_tool("context_read", {"id": home.documents["b"]})
            own_run = await client.read_resource(f"loci://runs/{home.runs['a']}")
    seen = json.dumps([searched.structured_content, listed.structured_content])
    assert "alpha" in seen and "bravo" not in seen
    uris = " ".join(str(r.uri) for r in resources.resources)
    assert home.documents["a"] in uris and home.documents["b"] not in uris
    assert other_document.is_error
    assert "alpha" in own_run.contents[0].text


async def test_a_token_of_a_cannot_read_b_as_a_resource(served: Served, token_home: TokenHome) -> None:
    uris = [f"loci://memory/{token_home.memories['b']}"]
    uris += [f"loci://runs/{run}" for project, run in token_home.runs.items() if project == "b"]
    uris += [f"loci://context/{doc}" for project, doc in token_home.documents.items() if project == "b"]
    refused: list[str] = []
    with anyio.fail_after(60):
        async with connected(served.url, token_home.tokens["alice"]) as client:
            for uri in uris:
                try:
                    await client.read_resource(uri)
                except Exception as exc:  # the SDK raises the server's INVALID_PARAMS error
                    refused.append(str(exc))
    assert len(refused) == len(uris) and not any("bravo" in r for r in refused)


async def test_a_token_of_a_writes_into_a_and_is_refused_at_the_door_of_b(
    served: Served, token_home: TokenHome
) -> None:
    with anyio.fail_after(60):
        async with connected(served.url, token_home.tokens["alice"]) as client:
            added = await client.call_tool("memory_remember", {"text": "alice wrote this"})
    door = post(at(served, "b"), {"Authorization": f"Bearer {token_home.tokens['alice']}"})
    assert not added.is_error
    assert door.status_code == 403 and "cannot reach the project 'b'" in door.json()["error"]
    assert token_home.rows("SELECT project FROM memory_nodes WHERE text = 'alice wrote this'") == [("a",)]


async def test_a_token_of_two_projects_chooses_one_by_the_path(served: Served, token_home: TokenHome) -> None:
    plain = post(served.url, {"Authorization": f"Bearer {token_home.tokens['both']}"})
    with anyio.fail_after(60):
        async with connected(at(served, "b"), token_home.tokens["both"]) as client:
            recalled = await client.call_tool("memory_recall", {"query": "vault code"})
    assert plain.status_code == 400 and "/p/a/mcp, /p/b/mcp" in plain.json()["error"]
    seen = json.dumps(recalled.structured_content)
    assert "bravo" in seen and "alpha" not in seen


async def test_a_read_only_token_reads_and_cannot_write(served: Served, token_home: TokenHome) -> None:
    own = token_home.memories["a"]
    with anyio.fail_after(60):
        async with connected(served.url, token_home.tokens["reader"]) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            recalled = await client.call_tool("memory_recall", {"query": "vault code"})
            written = await client.call_tool("memory_remember", {"text": "a reader's note"})
            forgotten = await client.call_tool("memory_forget", {"id": own})
    assert "memory_recall" in names and not {"memory_remember", "memory_forget", "context_load", "run_task"} & names
    assert "alpha" in json.dumps(recalled.structured_content)
    assert written.is_error and "read-only" in written.content[0].text
    assert forgotten.is_error and "read-only" in forgotten.content[0].text
    assert token_home.rows("SELECT count(*) FROM memory_nodes WHERE text = 'a reader''s note'") == [(0,)]
    assert token_home.rows(f"SELECT deleted FROM memory_nodes WHERE id = {own.removeprefix('mem:')}") == [(None,)]


async def test_a_read_only_token_cannot_forget_a_document(served: Served, token_home: TokenHome) -> None:
    home = token_home
    with anyio.fail_after(60):
        async with connected(served.url, home.tokens["reader"]) as client:
            loaded = await client.call_tool("context_forget", {"id": home.documents["a"]})
    assert loaded.is_error and "read-only" in loaded.content[0].text
    assert home.rows("SELECT count(*) FROM context_objects") == [(2,)]


async def test_a_revoked_token_is_refused_on_its_next_request(served: Served, token_home: TokenHome) -> None:
    auth = {"Authorization": f"Bearer {token_home.tokens['bob']}"}
    before = post(served.url, auth)
    await revoke(token_home.db, "bob")
    after = post(served.url, auth)
    assert before.status_code == 200 and after.status_code == 401


async def test_without_a_token_or_with_a_wrong_one_a_home_with_tokens_refuses(served: Served) -> None:
    assert post(served.url, {}).status_code == 401
    assert post(served.url, {"Authorization": "Bearer " + "x" * 43}).status_code == 401


async def test_the_servers_own_token_file_still_reaches_its_project(served: Served, token_home: TokenHome) -> None:
    with anyio.fail_after(60):
        async with connected(served.url, TOKEN) as client:
            added = await client.call_tool("memory_remember", {"text": "the owner's note"})
            recalled = await client.call_tool("memory_recall", {"query": "vault code"})
    assert not added.is_error and "vault" not in json.dumps(recalled.structured_content)
    assert token_home.rows("SELECT project FROM memory_nodes WHERE text = 'the owner''s note'") == [("default",)]


async def test_off_loopback_a_server_without_its_own_token_never_serves_without_one(token_home: TokenHome) -> None:
    async with use_engine(token_home.db) as store:
        app = http_app(_no_server, store=store, project="default", host="10.1.2.3", token=None)
        for name in ("alice", "bob", "both", "reader"):
            await Tokens(store).revoke(name)  # a home left without tokens does not open the server
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://10.1.2.3") as http:
            response = await http.post("/mcp", json=INIT_BODY)
    assert response.status_code == 401


def test_off_loopback_a_home_with_tokens_is_enough_to_start_and_a_new_home_is_not() -> None:
    check_bind("10.1.2.3", None, home_tokens=True)
    with pytest.raises(UsageError, match="loci tokens add"):
        check_bind("10.1.2.3", None, home_tokens=False)


async def test_the_compatible_server_serves_a_tokens_project_and_refuses_a_reader(
    tmp_path: Path, sqlite_token_home: TokenHome
) -> None:
    token_home = sqlite_token_home
    server = start(tmp_path, "memory", "--compat", "--token-cache", "0", db=Path(token_home.db))
    try:
        reader = post(server.url, {"Authorization": f"Bearer {token_home.tokens['reader']}"})
        with anyio.fail_after(60):
            async with connected(server.url, token_home.tokens["alice"]) as client:
                entity = {"name": "Vault", "entityType": "place", "observations": ["opened by alice"]}
                made = await client.call_tool("create_entities", {"entities": [entity]})
    finally:
        stop(server.process)
        assert server.process.stderr is not None
        server.process.stderr.close()
    assert reader.status_code == 403 and "read-only" in reader.json()["error"]
    assert not made.is_error
    assert token_home.rows("SELECT DISTINCT project FROM memory_nodes WHERE text LIKE '%alice%'") == [("a",)]


def _no_server(project: str, read_only: bool) -> Any:
    raise AssertionError("no request should reach a server")


async def test_a_session_opened_by_one_token_is_unknown_to_another_project_or_to_a_reader(
    served: Served, token_home: TokenHome
) -> None:
    opened = post(served.url, {"Authorization": f"Bearer {token_home.tokens['alice']}"})
    session = opened.headers["mcp-session-id"]
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_remember"}}
    call["params"]["arguments"] = {"text": "through another's session"}
    body = json.dumps(call).encode()
    for name in ("bob", "reader"):
        headers = {"Authorization": f"Bearer {token_home.tokens[name]}", "mcp-session-id": session}
        assert post(served.url, headers, body).status_code == 404, name
    assert token_home.rows("SELECT count(*) FROM memory_nodes WHERE text LIKE 'through%'") == [(0,)]
    own = {"Authorization": f"Bearer {token_home.tokens['alice']}", "mcp-session-id": session}
    assert post(served.url, own, body).status_code == 200  # the session itself is alive
