"""Caching hints on every read of the `loci` server (servers/caching.py), over each transport.

A memory, the resource list and a run are read again each time (`ttlMs` 0);
a loaded document keeps `DOCUMENT_TTL_MS`; the listings keep
`LISTING_TTL_MS`; every hint is `private`, since everything read is one
user's memory.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client, StdioServerParameters
from mcp.client.caching import CacheConfig

from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph
from loci.servers.app import build_app
from loci.servers.caching import DOCUMENT_TTL_MS, LISTING_TTL_MS
from tests.runtime.cli.test_serve_http import start, stop


async def _home(store: Store) -> tuple[str, str]:
    """A memory and a loaded document: their resource URIs."""
    node, _ = await Graph(store).remember("the harbour lantern is green")
    doc = await ContextStore(store).add_text("doc", "lantern.txt", "line one\nline two\n")
    return f"loci://memory/{node.ref}", f"loci://context/{doc.id}"


async def test_every_read_in_process_carries_private_hints_chosen_per_resource(store: Store) -> None:
    memory, document = await _home(store)
    async with Client(build_app(store), cache=None) as client:
        hints = {
            "memory": await client.read_resource(memory),
            "document": await client.read_resource(document),
            "range": await client.read_resource(f"{document}:1-1"),
            "resources": await client.list_resources(),
            "templates": await client.list_resource_templates(),
            "tools": await client.list_tools(),
            "prompts": await client.list_prompts(),
        }
    seen = {name: (result.ttl_ms, result.cache_scope) for name, result in hints.items()}
    assert seen == {
        "memory": (0, "private"),
        "document": (DOCUMENT_TTL_MS, "private"),
        "range": (DOCUMENT_TTL_MS, "private"),
        "resources": (0, "private"),
        "templates": (LISTING_TTL_MS, "private"),
        "tools": (LISTING_TTL_MS, "private"),
        "prompts": (LISTING_TTL_MS, "private"),
    }


async def test_over_stdio_a_memory_is_stale_at_once_and_a_document_keeps(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    async with await Store.open(db) as store:
        memory, document = await _home(store)
    served = StdioServerParameters(
        command=sys.executable, args=["-m", "loci.runtime.cli.main", "serve", "--db", str(db)]
    )
    with anyio.fail_after(120):
        async with Client(served, cache=CacheConfig()) as client:
            read_memory = await client.read_resource(memory)
            read_document = await client.read_resource(document)
    assert (read_memory.ttl_ms, read_memory.cache_scope) == (0, "private")
    assert (read_document.ttl_ms, read_document.cache_scope) == (DOCUMENT_TTL_MS, "private")


def _wire(url: str, ident: int, method: str, params: dict[str, Any], name: str | None) -> dict[str, Any]:
    """The result of one 2026-07-28 request as it travels: envelope in `params._meta`, routing in headers."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28"}
    headers |= {"Mcp-Method": method} | ({"Mcp-Name": name} if name else {})
    body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": meta}}
    return json.loads(httpx.post(url, json=body, headers=headers, timeout=60).text)["result"]


async def test_over_http_the_hints_are_on_the_wire(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    async with await Store.open(db) as store:
        memory, document = await _home(store)
    served = start(tmp_path, db=db)
    try:
        read_memory = _wire(served.url, 1, "resources/read", {"uri": memory}, memory)
        read_document = _wire(served.url, 2, "resources/read", {"uri": document}, document)
        listed = _wire(served.url, 3, "tools/list", {}, None)
    finally:
        stop(served.process)
        served.process.stderr.close()
    assert (read_memory["ttlMs"], read_memory["cacheScope"]) == (0, "private")
    assert (read_document["ttlMs"], read_document["cacheScope"]) == (DOCUMENT_TTL_MS, "private")
    assert (listed["ttlMs"], listed["cacheScope"]) == (LISTING_TTL_MS, "private")
