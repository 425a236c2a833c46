"""`loci mcp list --mcp-config FILE`: each configured MCP server, its status and its tools.

Every server of the file is started (or reached) as `loci run` would, with
its `allow`/`deny` filters applied; one that will not start is shown as
`failed` with the reason instead of stopping the listing. `--json` prints
one object per server.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from loci.runtime.host.host import McpHost

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("mcp", help="inspect the MCP servers an mcpServers file configures")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    listing = verbs.add_parser("list", help="each server: status and tools")
    listing.add_argument("--mcp-config", required=True, help="an mcpServers JSON file")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for each server")
    listing.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    async with McpHost(call_timeout=args.timeout) as host:
        await host.add_config(args.mcp_config, strict=False)
        servers = [_shown(name, hosted) for name, hosted in host.hosted.items()]
    if args.json:
        print(json.dumps({"servers": servers}, ensure_ascii=False, indent=2))
    else:
        for server in servers:
            print(f"{server['name']}  {server['status']}  ({server['transport']})")
            if server.get("error"):
                print(f"  error: {server['error']}")
            for tool in server["tools"]:
                print(f"  {tool['name']}  {tool['description']}")
    return 0 if all(s["status"] == "running" for s in servers) else 1


def _shown(name: str, hosted: Any) -> dict[str, Any]:
    tools = [{"name": f"{name}__{t.name}", "description": (t.description or "").split("\n")[0]} for t in hosted.tools]
    shown = {
        "name": name,
        "status": hosted.status,
        "transport": "http" if hosted.spec.url else "stdio",
        "tools": tools,
    }
    if hosted.error:
        shown["error"] = hosted.error
    return shown
