"""`loci memory`: the memory graph from the shell.

    loci memory add TEXT [--kind K] [--link ID ...] [--meta JSON]
    loci memory update ID TEXT [--reason R]
    loci memory forget ID [--reason R]
    loci memory link A B [--kind K] [--weight W]
    loci memory search QUERY [-k N] [--kind K ...]
    loci memory show ID
    loci memory neighbors ID [--depth N] [--kind K ...]
    loci memory stats
    loci memory export [--format json|graphml] [--out FILE]
    loci memory import FILE [--format F]   (runtime/cli/imports.py)
    loci memory restore ID [--reason R]    (runtime/cli/revisions.py)
    loci memory refine | consolidate | history ID | procedures [TASK]   (runtime/cli/evolution.py)

Every subcommand takes `--db PATH` (default: the Loci home; a
`postgresql://` connection string for every subcommand but import, refine,
consolidate, procedures and feedback, which say so), `--json` for
machine-readable output, and `--project P` (default `$LOCI_PROJECT`, else
`default`); the reading ones take `--all-projects` too (a search then names each
hit's project), and a write under it is refused. The commands call the same tools the model calls
(tools/memory.py), so the shell and the agent see one memory. Text is shown
through `runtime.cli.display.safe`: a memory holding escape sequences cannot
drive the terminal. The tools, the graph and the export are imported when a
subcommand runs, so `loci memory search` starts without the rest.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from loci.memory.engines.base import Engine
from loci.memory.errors import UsageError
from loci.memory.graph.export import FORMATS
from loci.memory.graph.records import EDGE_KINDS, NODE_KINDS
from loci.memory.json_input import loads
from loci.memory.projects import ALL
from loci.runtime.cli.display import one_line, safe
from loci.runtime.cli.evolution import register_memory
from loci.runtime.cli.flags import add_project, at_least, project_of
from loci.runtime.cli.home import open_home
from loci.runtime.cli.imports import register_import
from loci.runtime.cli.revisions import register_restore

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("memory", help="add to, search and browse the memory graph")
    sub = parser.add_subparsers(dest="memory_command", metavar="SUBCOMMAND", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db", default=None, help="the Loci home: a SQLite file or postgresql://... (default: $LOCI_HOME/loci.db)"
    )
    common.add_argument("--json", action="store_true", help="print JSON")
    add_project(common, every=True)

    add = sub.add_parser("add", parents=[common], help="remember a fact, an episode or a procedure")
    add.add_argument("text")
    add.add_argument("--kind", choices=NODE_KINDS, default="semantic")
    add.add_argument("--link", action="append", default=[], metavar="ID", help="link to this memory (repeatable)")
    add.add_argument("--meta", default=None, help="metadata as a JSON object")
    update = sub.add_parser("update", parents=[common], help="replace a memory's text, keeping its links")
    update.add_argument("id")
    update.add_argument("text")
    update.add_argument("--reason", default="", help="why the text changes (kept in its history)")
    forget = sub.add_parser("forget", parents=[common], help="forget a memory and its links (kept in history)")
    forget.add_argument("id")
    forget.add_argument("--reason", default="", help="why it is forgotten (kept in its history)")
    link = sub.add_parser("link", parents=[common], help="link memory A to memory B (again: sets the weight)")
    link.add_argument("a")
    link.add_argument("b")
    link.add_argument("--kind", choices=EDGE_KINDS, default="related")
    link.add_argument("--weight", type=float, default=None, help="0 to 1 (default 0.5)")
    search = sub.add_parser("search", parents=[common], help="recall the memories best matching a query")
    search.add_argument("query")
    search.add_argument("-k", type=int, default=10)
    search.add_argument("--kind", action="append", choices=NODE_KINDS, default=None)
    show = sub.add_parser("show", parents=[common], help="one memory in full, with its links")
    show.add_argument("id")
    near = sub.add_parser("neighbors", parents=[common], help="the memories linked to one")
    near.add_argument("id")
    near.add_argument("--depth", type=int, default=1, help="hops, 1 to 3 (default 1)")
    near.add_argument("--kind", action="append", choices=NODE_KINDS, default=None)
    sub.add_parser("stats", parents=[common], help="counts by kind and the file size")
    export = sub.add_parser("export", parents=[common], help="write the graph as JSON or GraphML")
    export.add_argument("--format", choices=FORMATS, default="json")
    export.add_argument("--out", type=Path, default=None, help="file to write (default: stdout)")
    parser.set_defaults(handler=handle)
    register_memory(sub, common)
    register_import(sub, common)
    register_restore(sub, common)


def _check(args: argparse.Namespace) -> None:
    at_least(1, k=getattr(args, "k", None), depth=getattr(args, "depth", None))
    weight = getattr(args, "weight", None)
    if weight is not None and not 0.0 <= weight <= 1.0:
        raise UsageError(f"--weight must be from 0 to 1, not {weight:g}")


async def handle(args: argparse.Namespace) -> int:
    _check(args)
    async with open_home(args.db) as store:
        if args.memory_command == "export":
            return await _export(store, args)
        if args.memory_command == "search":
            result: Any = await _search(store, args)
        elif args.memory_command == "stats":
            from loci.memory.graph.graph import Graph

            result = await Graph(
                store, project=project_of(args)
            ).stats()  # what memory_stats returns, without the tool set
        else:
            result = await _dispatch(store, args)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        _print(args.memory_command, result)
    return 0


async def _dispatch(store: Engine, args: argparse.Namespace) -> Any:
    from loci.memory.graph.graph import Graph
    from loci.tools.memory import MemoryTools

    tools = MemoryTools(Graph(store, project=project_of(args)))
    command = args.memory_command
    if command == "add":
        return await tools.memory_remember(args.text, args.kind, args.link, _meta(args.meta))
    if command == "update":
        return await tools.memory_update(args.id, args.text, args.reason)
    if command == "forget":
        return await tools.memory_forget(args.id, args.reason)
    if command == "link":
        return await tools.memory_link(args.a, args.b, args.kind, args.weight)
    if command == "show":  # a person asked for the memory in full: read on past the tool's part, to its end
        shown = await tools.memory_get(args.id)
        while "next_offset" in shown:
            more = await tools.memory_get(args.id, offset=shown["next_offset"])
            shown = {**shown, "text": shown["text"] + more["text"], "next_offset": more.get("next_offset")}
            if shown["next_offset"] is None:
                del shown["next_offset"]
        return shown
    if command == "neighbors":
        return await tools.memory_neighbors(args.id, depth=args.depth, kinds=args.kind)
    raise AssertionError(f"no such memory subcommand: {command}")


async def _search(store: Engine, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Like the model's recall, but a person browsing does not count as a use (and needs no tool set)."""
    from loci.memory.graph.graph import Graph
    from loci.memory.graph.recall import Recall
    from loci.tools.shown import check_query, node_dict

    project = project_of(args)
    recall = Recall(Graph(store, project=project))
    found = await recall.recall(check_query(args.query), k=args.k, kinds=args.kind, record=False)
    rows = [{**node_dict(r.node), "score": r.score, "parts": r.parts} for r in found]
    if project is ALL:  # over every project, each hit names its own
        rows = [{**row, "project": r.node.project} for row, r in zip(rows, found, strict=True)]
    return rows


def _meta(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        meta = loads(text)
    except ValueError as exc:
        raise UsageError(f"--meta must be a JSON object: {exc}") from exc
    if not isinstance(meta, dict):
        raise UsageError('--meta must be a JSON object, such as \'{"source": "notes.md"}\'')
    return meta


async def _export(store: Engine, args: argparse.Namespace) -> int:
    from loci.memory.graph.export import export_graph

    if args.out is None:
        counts = await export_graph(store, sys.stdout, args.format, project=project_of(args))
    else:
        try:
            with args.out.open("w", encoding="utf-8") as out:
                counts = await export_graph(store, out, args.format, project=project_of(args))
        except OSError as exc:
            raise UsageError(f"cannot write {args.out}: {exc.strerror}") from exc
        print(f"wrote {counts['nodes']} nodes and {counts['edges']} edges to {args.out}", file=sys.stderr)
    if counts.get("unreadable"):
        print(
            f"loci: {counts['unreadable']} rows of {store.path} could not be read (the file is damaged); "
            "every readable row was written",
            file=sys.stderr,
        )
        return 1
    return 0


def _print(command: str, result: Any) -> None:
    if command == "add":
        state = "remembered" if result["created"] else "already known, use counted"
        print(f"{result['id']}  {state}")
    elif command == "update":
        print(f"{result['id']}  updated: {one_line(result['text'])}")
    elif command == "forget":
        print(f"{result['id']}  forgotten")
    elif command == "link":
        state = "linked" if result["created"] else "link updated"
        print(f"{result['src']} -[{result['kind']} {result['weight']}]-> {result['dst']}  {state}")
    elif command in ("search", "neighbors"):
        if not result:
            print("nothing found")
        for row in result:
            extra = f"{row['score']:.3f}" if "score" in row else f"{row['hops']} hop{'s' * (row['hops'] > 1)}"
            where = f"{safe(row['project'], lines=False)}  " if "project" in row else ""
            print(f"{row['id']:>10}  {where}{row['kind']:<10}  {extra:>8}  {one_line(row['text'])}")
    elif command == "show":
        print(f"{result['id']}  {result['kind']}  uses {result['uses']}")
        print(safe(result["text"]))
        for edge in result["edges"]:
            print(f"  {edge['src']} -[{edge['kind']} {edge['weight']}]-> {edge['dst']}")
    else:
        for key, value in result.items():
            print(f"{key:>16}  {value}")
