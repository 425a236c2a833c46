"""`loci memory restore ID [--reason TEXT]`: bring a forgotten memory back, with its links.

`loci memory history ID` (runtime/cli/evolution.py) shows the earlier texts
and the reasons given for each change; this command undoes a forget through
the same tool the model calls (`memory_restore`, tools/memory.py).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from loci.memory.graph.graph import Graph
from loci.runtime.cli.flags import project_of
from loci.runtime.cli.home import open_home

__all__ = ["register_restore"]


def register_restore(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `restore` to `loci memory`."""
    parser = sub.add_parser("restore", parents=[common], help="bring a forgotten memory back, with its links")
    parser.add_argument("id", help="mem:N")
    parser.add_argument("--reason", default="", help="why it comes back (kept in its history)")
    parser.set_defaults(handler=handle)


async def handle(args: argparse.Namespace) -> int:
    async with open_home(args.db) as store:
        from loci.tools.memory import MemoryTools  # the tool set brings pydantic: only when restoring

        result = await MemoryTools(Graph(store, project=project_of(args))).memory_restore(args.id, args.reason)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(f"{result['id']}  restored  {result['text'][:100]}")
    return 0
