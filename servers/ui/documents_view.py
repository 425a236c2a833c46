"""What the page shows of the context store: documents by path, and apart from them what runs recorded.

Two kinds of context object live in one table and mean different things to
a person. Documents (`doc`) are the files they loaded: the page lists every
one with the path it was read from, since two files of one name
(`copyright`, `README.md`) are common; each is shown by the shortest tail
of its path that no other listed document shares (`bash/copyright`,
`dpkg/copyright`), with the whole path beside it. What runs recorded (`obs`
a tool's result, `turn` a turn, `note` a folded window) is listed apart,
newest first and bounded, with its count by kind and, for a tool result,
the run whose turn made it (read from the runs' turn records), so a home
with thousands of search results still shows its documents.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

import sqlite_utils

from loci.memory.context.store import ContextStore
from loci.memory.graph.graph import Graph
from loci.memory.projects import in_project
from loci.memory.records.runs import Runs

__all__ = ["LISTED_RECORDS", "DocumentsView", "shown_paths"]

LISTED_DOCUMENTS = 500
LISTED_RECORDS = 100
RECORD_KINDS = ("obs", "turn", "note")
RUNS_READ = 200


def shown_paths(paths: list[str | None]) -> list[str | None]:
    """Each path by the shortest tail of its parts that no other path in `paths` ends with."""
    split = [PurePath(p).parts if p else () for p in paths]
    shown: list[str | None] = []
    for i, parts in enumerate(split):
        if not parts:
            shown.append(None)
            continue
        n = 1
        while n < len(parts) and any(j != i and other[-n:] == parts[-n:] for j, other in enumerate(split)):
            n += 1
        shown.append(str(PurePath(*parts[-n:])))
    return shown


def _records(db: sqlite_utils.Database, project: str | None, limit: int) -> dict[str, Any]:
    mine, params = in_project(project)
    marks = ",".join("?" * len(RECORD_KINDS))
    counts = {kind: 0 for kind in RECORD_KINDS}
    sql = f"SELECT kind, count(*) FROM context_objects WHERE kind IN ({marks}) AND complete = 1{mine} GROUP BY kind"
    counts.update(dict(db.execute(sql, [*RECORD_KINDS, *params]).fetchall()))
    sql = (
        f"SELECT id, kind, name, lines, tokens, created FROM context_objects WHERE kind IN ({marks}) AND complete = 1"
        f"{mine} ORDER BY id DESC LIMIT ?"
    )
    rows = db.execute(sql, [*RECORD_KINDS, *params, limit]).fetchall()
    listed = [
        {"id": f"{kind}:{number}", "kind": kind, "name": name, "lines": lines, "tokens": tokens, "created": created}
        for number, kind, name, lines, tokens, created in rows
    ]
    return {"counts": counts, "total": sum(counts.values()), "records": listed}


class DocumentsView:
    """The documents of one project with their paths, and the records its runs left; reads only."""

    def __init__(self, graph: Graph) -> None:
        self.store = graph.store
        self.project = graph.project
        self.contexts = ContextStore(graph.store, project=graph.project)
        self.runs = Runs(graph.store, project=graph.project)

    async def documents(self) -> dict[str, Any]:
        found = await self.contexts.list(["doc"])
        shown = found[-LISTED_DOCUMENTS:]
        tails = shown_paths([o.source for o in shown])
        listed = [
            {
                "id": o.id,
                "name": o.name,
                "path": o.source,
                "shown": tail or o.name,
                "lines": o.lines,
                "tokens": o.tokens,
                "format": o.meta.get("format"),
            }
            for o, tail in zip(shown, tails, strict=True)
        ]
        return {"total": len(found), "documents": listed}

    async def records(self, limit: int = LISTED_RECORDS) -> dict[str, Any]:
        n = max(1, min(int(limit), 1_000))
        found = await self.store.read(lambda db: _records(db, self.project, n))
        made_by = {
            str(turn.get("observation_id")): record.ref
            for record in await self.runs.list(RUNS_READ)
            for turn in record.turns
            if turn.get("observation_id")
        }
        for item in found["records"]:
            item["run"] = made_by.get(item["id"])
        return found
