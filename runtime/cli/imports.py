"""`loci memory import FILE`: conversations and memories people already have, into the memory graph.

    loci memory import FILE [--format auto|jsonl|locomo|claude-code|codex|chatgpt|text|loci-export|memory-jsonl]
    loci memory import FOLDER              every .jsonl and .json file under it (Codex's ~/.codex/sessions)

The readers and the writer are memory/imports/; this module only parses and
reports. Importing the same file again adds nothing, and a longer version of
it adds only its new turns, so the command is safe to run on a schedule. A
folder's files are read and their formats told before any is imported, so
a file that is none of the formats stops the command with nothing written;
then each is imported in name order.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from loci.memory.context.store import ContextStore
from loci.memory.errors import UsageError
from loci.memory.graph.graph import Graph
from loci.memory.imports.files import FORMATS, ImportReport, detect, import_file
from loci.memory.projects import writable_project
from loci.runtime.cli.flags import project_of
from loci.runtime.cli.home import open_home

__all__ = ["register_import"]


def register_import(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `import` to `loci memory`."""
    parser = sub.add_parser("import", parents=[common], help="import conversations or memories from a file")
    parser.add_argument("file", type=Path, help="a file, or a folder of .jsonl and .json files")
    parser.add_argument("--format", choices=FORMATS, default="auto", help="the file's format (default: detected)")
    parser.set_defaults(handler=handle)


async def handle(args: argparse.Namespace) -> int:
    files = _folder(args.file, args.format) if args.file.is_dir() else [args.file]
    reports = []
    async with open_home(args.db) as store:
        project = writable_project(project_of(args))
        graph, contexts = Graph(store, project=project), ContextStore(store, project=project)
        for path in files:
            reports.append(await import_file(graph, path, args.format, contexts))
    if args.json:
        shown: Any = [report_dict(r) for r in reports] if args.file.is_dir() else report_dict(reports[0])
        print(json.dumps(shown, indent=2, ensure_ascii=False))
    else:
        for report in reports:
            _print(report)
    return 0


def _folder(folder: Path, fmt: str) -> list[Path]:
    """Every `.jsonl` and `.json` file under `folder`, by name; each one's format is told first (or it is an error)."""
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".jsonl", ".json") and p.is_file())
    if not files:
        raise UsageError(f"{folder} holds no .jsonl or .json file to import")
    for path in files if fmt == "auto" else []:
        try:
            detect(path.read_text(encoding="utf-8"), str(path))
        except UnicodeDecodeError as exc:
            raise UsageError(f"{path} is not UTF-8 text (byte {exc.start}); nothing was imported") from exc
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror}; nothing was imported") from exc
        except UsageError as exc:
            raise UsageError(f"{exc}; nothing was imported") from exc
    return files


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
