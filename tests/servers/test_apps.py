"""The page as an MCP App (servers/apps.py), over the in-process transport and `loci serve --http`.

A client that declares the apps extension (with the app MIME type) is listed
the two `ui://` views, reads them as self-contained HTML of that MIME type,
and finds `memory_recall` (and, on `loci serve`, `run_task`) linked to them
by `_meta.ui.resourceUri`. A client that does not declare it is listed the
tools and resources it was before: no `ui` meta, no `ui://` resource. Over a
home with tokens, what a view is given and may read for a token of project
`a` (the recall's result, a run's record) is `a`'s alone.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.extension import advertise
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from loci.memory.engines.sqlite.store import Store
from loci.servers.app import build_app
from loci.servers.apps import APP_MIME_TYPE, EXTENSION_ID, RECALL_URI, RUN_URI
from loci.servers.caching import LISTING_TTL_MS
from tests.runtime.cli.test_serve_http import start, stop
from tests.servers.test_scoped import serving
from tests.servers.tokens_home import TokenHome

RENDERS_APPS = advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})


async def _seen(client: Client) -> dict[str, Any]:
    """What a client is listed: each tool's `_meta` and each resource's URI and MIME type."""
    tools = {tool.name: tool.meta or {} for tool in (await client.list_tools()).tools}
    resources = {str(r.uri): r.mime_type for r in (await client.list_resources()).resources}
    return {"tools": tools, "resources": resources}


def _without_ui(seen: dict[str, Any]) -> dict[str, Any]:
    tools = {name: {k: v for k, v in meta.items() if k != "ui"} for name, meta in seen["tools"].items()}
    return {"tools": tools, "resources": {u: m for u, m in seen["resources"].items() if not u.startswith("ui://")}}


def _self_contained(html: str) -> None:
    """Nothing in the view reaches the network: no external script, style, image, frame or URL at all."""
    assert html.startswith("<!doctype html>")
    assert not re.search(r"\b(src|href)\s*=", html), "the view loads nothing"
    assert "http://" not in html and "https://" not in html and "fetch(" not in html


async def test_a_client_that_renders_apps_reads_the_views_and_finds_recall_linked(store: Store) -> None:
    app = build_app(store, ["memory"])
    async with Client(app, extensions=[RENDERS_APPS]) as apps, Client(app) as plain:
        shown, before = await _seen(apps), await _seen(plain)
        read = await apps.read_resource(RECALL_URI)
        read_by_plain = await plain.read_resource(RUN_URI)
    assert shown["tools"]["memory_recall"]["ui"] == {"resourceUri": RECALL_URI}
    assert "ui" not in shown["tools"]["memory_remember"]  # only the tools with a view are linked
    assert shown["resources"][RECALL_URI] == shown["resources"][RUN_URI] == APP_MIME_TYPE
    (content,) = read.contents
    assert content.mime_type == APP_MIME_TYPE and str(content.uri) == RECALL_URI
    assert content.meta == {"ui": {"prefersBorder": True}}  # no CSP domains: the host lets it reach nothing
    assert 'data-view="recall"' in content.text and "function runHead" in content.text  # the page's render.js
    _self_contained(content.text)
    assert read.ttl_ms == LISTING_TTL_MS and read.cache_scope == "private"
    assert 'data-view="run"' in read_by_plain.contents[0].text  # a fixed document, read by whoever asks
    # A client that does not render apps is listed exactly what it was: the same, less the views and links.
    assert _without_ui(shown) == before
    assert all("ui" not in meta for meta in before["tools"].values())
    assert not any(uri.startswith("ui://") for uri in before["resources"])


async def test_over_streamable_http_recall_and_run_task_are_linked_for_an_apps_client_only(tmp_path: Path) -> None:
    served = start(tmp_path)
    try:
        with anyio.fail_after(60):
            async with Client(streamable_http_client(served.url), extensions=[RENDERS_APPS]) as apps:
                shown = await _seen(apps)
                read = await apps.read_resource(RUN_URI)
                capabilities = apps.server_capabilities
            async with Client(streamable_http_client(served.url)) as plain:
                before = await _seen(plain)
    finally:
        stop(served.process)
        assert served.process.stderr is not None
        served.process.stderr.close()
    assert capabilities is not None and capabilities.extensions is not None
    assert EXTENSION_ID in capabilities.extensions
    assert shown["tools"]["memory_recall"]["ui"]["resourceUri"] == RECALL_URI
    assert shown["tools"]["run_task"]["ui"]["resourceUri"] == RUN_URI
    assert read.contents[0].mime_type == APP_MIME_TYPE and 'data-view="run"' in read.contents[0].text
    _self_contained(read.contents[0].text)
    assert _without_ui(shown) == before and RUN_URI not in before["resources"]


async def test_what_a_view_is_given_and_reads_for_a_token_is_its_projects_alone(
    tmp_path: Path, token_home: TokenHome
) -> None:
    runs = {project: f"loci://runs/{run}" for project, run in token_home.runs.items()}
    with contextmanager(serving)(tmp_path, token_home) as served:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token_home.tokens['alice']}"})
        with anyio.fail_after(60):
            async with (
                http,
                Client(streamable_http_client(served.url, http_client=http), extensions=[RENDERS_APPS]) as a,
            ):
                view = await a.read_resource(RECALL_URI)
                recalled = await a.call_tool("memory_recall", {"query": "vault code"})
                own_run = await a.read_resource(runs["a"])
                try:
                    await a.read_resource(runs["b"])
                    other_run = "read"
                except Exception as exc:  # the SDK raises the server's INVALID_PARAMS error
                    other_run = str(exc)
    assert view.contents[0].mime_type == APP_MIME_TYPE
    texts = [hit["text"] for hit in recalled.structured_content["result"]]
    assert texts and all("alpha" in text for text in texts) and not any("bravo" in text for text in texts)
    assert "alpha" in own_run.contents[0].text and other_run != "read" and "bravo" not in other_run
