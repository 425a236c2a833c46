"""The listing `loci serve` answers from before its server has loaded, written from the real server.

    python -m loci.runtime.cli.listing        rewrite servers/transports/ready.json from the server as it is now

`listing()` runs the merged server of `loci serve` (every tool set of
`runtime.cli.serve.tool_sets`) on a home in a temporary folder, through the
SDK's stdio transport with the lines given in memory, and keeps exactly what
it writes back: the `initialize` result for each protocol version the SDK
knows and for one it does not (`"*"`), with `serverInfo.version` emptied (the
caller fills in Loci's), and the `tools/list` result of each tool set served
alone. A version the server refuses to initialize is kept as null, and the
early answers then leave it to the server. A test holds the shipped listing
equal to this one, so a change to a tool's signature or docstring, or to
the SDK, is caught until the listing is written again.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from loci.runtime.cli.serve import SERVED, tool_sets
from loci.servers.transports.ready import ANY_VERSION, LISTING_PATH, Listing

__all__ = ["listing", "main"]

UNKNOWN_VERSION = "0000-00-00"


async def listing() -> Listing:
    """What the real server answers now (see the module docstring)."""
    from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

    initialize: dict[str, dict[str, Any] | None] = {}
    tools: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as home:
        db = Path(home) / "loci.db"
        for version in (*KNOWN_PROTOCOL_VERSIONS, UNKNOWN_VERSION):
            [opened] = await _answers(db, SERVED, version, [])
            if opened.get("result") is not None:
                opened["result"]["serverInfo"]["version"] = ""
            initialize[ANY_VERSION if version == UNKNOWN_VERSION else version] = opened.get("result")
        handshake = max(v for v, result in initialize.items() if result is not None and v != ANY_VERSION)
        for name in SERVED:
            _, listed = await _answers(db, (name,), handshake, [{"method": "tools/list"}])
            tools[name] = listed["result"]["tools"]
    return Listing(initialize, tools)


async def _answers(db: Path, served: tuple[str, ...], version: str, then: list[dict[str, Any]]) -> list[dict]:
    """The server's answers, by request, to `initialize` at `version`, then (once initialized) to `then`."""
    from mcp.server.stdio import stdio_server

    from loci.memory.engines.sqlite.store import Store
    from loci.servers.app import build_app

    opening = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "listing", "version": "0"}}
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": opening}]
    lines += [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": i, **request} for i, request in enumerate(then, start=1)]
    out = _Collected(expected=1 + len(then))

    async def given() -> AsyncIterator[str]:
        for line in lines:
            yield json.dumps(line)
        await out.done.wait()  # the input stays open until every answer is out, as a client's does

    async with await Store.open(db) as store:
        app = build_app(store, served, tool_sets=tool_sets(), options={"model": "scripted:none"})
        with anyio.fail_after(60):
            async with stdio_server(stdin=given(), stdout=out) as (read, write):  # type: ignore[arg-type]
                await app.run(read, write, app.create_initialization_options())
    return sorted(out.answers, key=lambda answer: answer["id"])


class _Collected:
    """The server's side of an in-memory stdio: the answers it writes, kept by request."""

    def __init__(self, expected: int) -> None:
        self.expected, self.answers, self.done = expected, [], anyio.Event()

    async def write(self, text: str) -> None:
        for line in text.splitlines():
            message = json.loads(line)
            if "id" in message and "method" not in message:
                self.answers.append(message)
        if len(self.answers) >= self.expected:
            self.done.set()

    async def flush(self) -> None:
        return None


def main() -> None:
    written = anyio.run(listing)
    LISTING_PATH.write_text(json.dumps(written.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {LISTING_PATH}")


if __name__ == "__main__":
    main()
