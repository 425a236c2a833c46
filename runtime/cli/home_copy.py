"""`loci home copy SRC DST`: move a home between SQLite and PostgreSQL (either way), ids and history kept.

    loci home copy ~/.loci/loci.db postgresql://loci@db/loci
    loci home copy postgresql://loci@db/loci ./laptop.db [--replace] [--skip-missing] [--sample N]

SRC and DST are each a SQLite file or a `postgresql://` connection string.
The source is opened to read only, never migrated nor written, and must be a
Loci home (a path that does not exist, a folder, an empty file, or a file or
database without Loci's tables is refused in one line:
`memory.engines.copy.open_source`); the destination is made (a new
file, or the tables of an empty database) when it has none. The copy itself
is `memory.engines.copy.copy_home`, in one transaction of the destination:
it refuses a destination that holds rows unless `--replace` (which empties
Loci's tables first, and leaves any other table as it is), and a source whose rows the destination has no table for yet
unless `--skip-missing`. The full-text indexes are made again, the graph's
from the copied nodes (`memory.graph.pieces.reindex`) and the documents' from
the copied chunks (the context store's index module, `reindex`).

Then it verifies, and says what it did, a line a table: each table's rows
counted again in the destination against the source, and a sample of
recalls (`--sample`, 20 by default: live memories spread over the ids, each
recalled by its own words on both homes; `recall_sample`). A memory the
source finds in its top 10 must be in the destination's: the engines rank
by the same BM25 but stem differently (memory/graph/fts/), so the lists may
differ in order and in their tail, and the line says how many were the same
ids. A count or a recall that does not agree is an error (exit 1).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from loci.memory.errors import StoreError, UsageError
from loci.memory.location import is_postgres, shown

__all__ = ["recall_sample", "register"]

SAMPLE = 20
TOP = 10


def register(sub: Any) -> None:
    parser = sub.add_parser("home", help="move a home between SQLite and PostgreSQL")
    commands = parser.add_subparsers(dest="home_command", metavar="COMMAND", required=True)
    copy = commands.add_parser("copy", help="copy every table of one home into another, ids and history kept")
    copy.add_argument("src", help="the home to copy: a SQLite file or postgresql://...")
    copy.add_argument("dst", help="where to copy it: a SQLite file or postgresql://... (made when it has no home)")
    copy.add_argument("--replace", action="store_true", help="empty a destination that holds rows, then copy")
    copy.add_argument(
        "--skip-missing", action="store_true", help="leave out the source's tables the destination has none of"
    )
    copy.add_argument("--sample", type=int, default=SAMPLE, help=f"recalls to verify (default: {SAMPLE})")
    copy.add_argument("--json", action="store_true", help="print JSON")
    copy.set_defaults(handler=handle)


async def handle(args: argparse.Namespace) -> int:
    from loci.memory.engines.copy import copy_home
    from loci.memory.engines.select import use_engine

    src, dst = _home(args.src, "source", must_exist=True), _home(args.dst, "destination", must_exist=False)
    if src == dst:
        raise UsageError("the source and the destination are the same home")
    if args.sample < 0:
        raise UsageError(f"--sample must be 0 or more, not {args.sample}")
    source = await _opened_source(src)
    try:
        async with use_engine(dst) as target:
            copied, left_out, indexed = await copy_home(
                source, target, _reindex, replace=args.replace, skip_missing=args.skip_missing
            )
            recalls = await recall_sample(source, target, args.sample)
    finally:
        source.close()
    wrong = [c for c in copied if c.rows != c.found]
    report = {
        "source": shown(src),
        "destination": shown(dst),
        "tables": {c.table: c.rows for c in copied},
        "left_out": left_out,
        "indexed": indexed,
        "recalls": recalls,
    }
    if wrong:
        counted = ", ".join(f"{c.table} has {c.found:,} rows of {c.rows:,}" for c in wrong)
        raise StoreError(f"the copy into {shown(dst)} does not verify: {counted}")
    if recalls["lost"]:
        raise StoreError(f"the copy into {shown(dst)} does not verify: it does not recall {', '.join(recalls['lost'])}")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    return 0


def _home(location: str, role: str, *, must_exist: bool) -> str:
    """A connection string as given, or a path that is not a folder (and, for the source, exists)."""
    if is_postgres(location):
        return location
    path = Path(location).expanduser()
    if path.is_dir():
        raise UsageError(f"the {role} {location} is a folder; give a home's file (loci.db) or postgresql://...")
    if must_exist and not path.is_file():
        raise UsageError(f"the {role} {location} does not exist; give a home's file or postgresql://...")
    return os.fspath(path.resolve())


async def _opened_source(src: str) -> Any:
    from loci.memory.engines.copy import open_source

    if is_postgres(src):
        from loci.memory.location import need_postgres_driver

        need_postgres_driver()
    return await open_source(src)


async def recall_sample(source: Any, target: Any, size: int) -> dict[str, Any]:
    """Recall `size` live memories, spread over the ids, by their own words on both homes: how many the source
    found in its top `TOP`, how many of those had the same ids on both, and those the destination lost."""
    from loci.memory.graph.graph import Graph
    from loci.memory.graph.recall import Recall
    from loci.memory.graph.run_records import RUN_KINDS
    from loci.memory.graph.terms import query_terms

    def pick(db: Any) -> list[tuple[int, str, str, str]]:
        ids = [row[0] for row in db.conn.execute("SELECT id FROM memory_nodes WHERE deleted IS NULL ORDER BY id")]
        chosen = sorted({ids[i * len(ids) // size] for i in range(size)}) if ids and size else []
        sql = "SELECT id, project, text, kind FROM memory_nodes WHERE id = ?"
        return [tuple(db.conn.execute(sql, [node_id]).fetchone()) for node_id in chosen]

    found = same = 0
    lost: list[str] = []
    sampled = await source.read(pick)
    for node_id, project, text, kind in sampled:
        query = " ".join(query_terms(text))
        if not query.strip():
            continue
        # A run's record (an episode, a distilled procedure) is recalled only by its kind (run_records.py).
        kinds = [kind] if kind in RUN_KINDS else None
        mine = [r.node.id for r in await Recall(Graph(source, project=project)).recall(query, TOP, kinds, record=False)]
        theirs = [
            r.node.id for r in await Recall(Graph(target, project=project)).recall(query, TOP, kinds, record=False)
        ]
        if node_id in mine:
            found += 1
            same += mine == theirs
            if node_id not in theirs:
                lost.append(f"mem:{node_id}")
    return {"asked": len(sampled), "found": found, "same": same, "lost": lost}


def _reindex(conn: Any) -> int:
    """Fill the destination's full-text indexes from its copied rows: the graph's, then the documents'."""
    from loci.memory.context.fulltext import chunk_index
    from loci.memory.graph.pieces import reindex

    return reindex(conn) + chunk_index(conn).reindex(conn)


def _print(report: dict[str, Any]) -> None:
    print(f"copied {report['source']} into {report['destination']}")
    for table, rows in report["tables"].items():
        print(f"{table}: {rows:,} row{'s' if rows != 1 else ''}")
    for table in report["left_out"]:
        print(f"{table}: left out (the destination has no such table yet)")  # --skip-missing
    print(f"full-text indexes: {report['indexed']:,} rows made again (memories and document chunks)")
    recalls = report["recalls"]
    print(
        f"verified: every table's rows counted again; {recalls['found']} of {recalls['asked']} sampled recalls found"
        " their memory"
        f" in both homes ({recalls['same']} with the same top {TOP})"
    )
