"""`loci memory import FILE`: conversations and memories people already have, into the memory graph.

    loci memory import FILE [--format auto|jsonl|locomo|claude-code|chatgpt|loci-export|memory-jsonl]

The readers and the writer are memory/imports/; this module only parses and
reports. Importing the same file again adds nothing, and a longer version of
it adds only its new turns, so the command is safe to run on a schedule.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from memory.context.store import ContextStore
from memory.graph.graph import Graph
from memory.imports.files import FORMATS, ImportReport, import_file
from memory.projects import writable_project
from memory.store import Store, default_db_path
from runtime.cli.flags import project_of

__all__ = ["register_import"]


def register_import(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `import` to `loci memory`."""
    parser = sub.add_parser("import", parents=[common], help="import conversations or memories from a file")
    parser.add_argument("file", type=Path)
    parser.add_argument("--format", choices=FORMATS, default="auto", help="the file's format (default: detected)")
    parser.set_defaults(handler=handle)


async def handle(args: argparse.Namespace) -> int:
    async with await Store.open(args.db or default_db_path()) as store:
        project = writable_project(project_of(args))
        graph, contexts = Graph(store, project=project), ContextStore(store, project=project)
        report = await import_file(graph, args.file, args.format, contexts)
    if args.json:
        print(json.dumps(report_dict(report), indent=2, ensure_ascii=False))
    else:
        _print(report)
    return 0


def report_dict(report: ImportReport) -> dict[str, Any]:
    conversations = [
        {**{k: v for k, v in asdict(c).items() if k != "nodes"}, "turns": len(c.nodes)} for c in report.conversations
    ]
    out: dict[str, Any] = {"file": report.path, "format": report.format, "added": report.added}
    if report.format in ("loci-export", "memory-jsonl"):
        return {**out, "added": report.nodes + report.edges, "nodes": report.nodes, "edges": report.edges}
    return {**out, "conversations": conversations}


def _print(report: ImportReport) -> None:
    if report.format in ("loci-export", "memory-jsonl"):
        print(f"{report.path} ({report.format}): {report.nodes} new nodes, {report.edges} new edges")
        return
    for c in report.conversations:
        tools = f", tool calls in {c.tools}" if c.tools else ""
        print(f"{c.key}  {c.added} new turns, {c.already} already imported{tools}  {c.title}")
        for ref, reason in c.skipped:
            print(f"{c.key}  skipped turn {ref!r}: {reason}", file=sys.stderr)
    print(f"{report.path} ({report.format}): {len(report.conversations)} conversations", file=sys.stderr)
