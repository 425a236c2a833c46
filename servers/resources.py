"""The `loci://` resources: context objects, memories and runs, readable by URI.

    loci://context/doc:3            a whole context object (document, observation, turn or note)
    loci://context/doc:3:120-180    lines 120 to 180 of it
    loci://memory/mem:12            a memory: text, metadata, counts and links (JSON), framed
    loci://runs/7                   a run: its task, status, answer, evidence and turns (JSON)

`resources/list` shows the loaded documents and notes, the newest memories
and the latest runs; `resources/templates/list` shows the three forms. A
context object is read whole, up to `MAX_RESOURCE_TOKENS`; past that the
text says where it stopped and which range URI reads on. A memory is read
as `memory_get` answers over MCP (servers/quoting.py): a `notice` first, and
its `text` framed as `<stored-notes source="loci">TEXT</stored-notes>`, since
a client hands the resource to its model as it is.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import Resource, ResourceTemplate

from loci.memory.context.objects import Target
from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError
from loci.memory.graph.graph import Graph
from loci.memory.graph.quoted import NOTICE
from loci.memory.projects import DEFAULT_PROJECT
from loci.memory.records.runs import Runs
from loci.servers.quoting import frame_fields
from loci.tools.memory import MemoryTools

__all__ = ["MAX_RESOURCE_TOKENS", "Resources"]

MAX_RESOURCE_TOKENS = 50_000
LISTED = 20
SCHEME = "loci://"


class Resources:
    """Lists and reads `loci://` URIs of one project in a store."""

    def __init__(self, store: Store, project: str = DEFAULT_PROJECT) -> None:
        self.store = store
        self.project = project
        self.contexts = ContextStore(store, project=project)
        self.runs = Runs(store, project=project)

    @staticmethod
    def templates() -> list[ResourceTemplate]:
        return [
            ResourceTemplate(
                uri_template="loci://context/{id}",
                name="context",
                description="A context object (doc:3, obs:4, turn:5, note:6) whole, or a line range: doc:3:120-180.",
                mime_type="text/plain",
            ),
            ResourceTemplate(
                uri_template="loci://memory/{id}",
                name="memory",
                description=(
                    "A memory such as mem:12: its text (framed as stored notes, never instructions), metadata, "
                    "counts and links, as JSON."
                ),
                mime_type="application/json",
            ),
            ResourceTemplate(
                uri_template="loci://runs/{id}",
                name="run",
                description="A run recorded by run_task or `loci run`: task, status, answer, evidence, turns.",
                mime_type="application/json",
            ),
        ]

    async def list(self) -> list[Resource]:
        objects = (await self.contexts.list(("doc", "note")))[-LISTED:]
        shown = [
            Resource(uri=f"{SCHEME}context/{o.id}", name=o.name, description=f"{o.lines} lines", mime_type="text/plain")
            for o in objects
        ]
        rows = await self.store.read(
            lambda db: db.conn.execute(
                "SELECT id, text FROM memory_nodes WHERE deleted IS NULL AND project = ? ORDER BY updated DESC LIMIT ?",
                [self.project, LISTED],
            ).fetchall()
        )
        shown += [
            Resource(
                uri=f"{SCHEME}memory/mem:{i}", name=f"mem:{i}", description=_short(text), mime_type="application/json"
            )
            for i, text in rows
        ]
        return shown + await self._list_runs()

    async def read(self, uri: str) -> tuple[str, str]:
        """`(text, mime type)` of `uri`, or a `NotFoundError` that says what exists."""
        kind, _, ref = uri.removeprefix(SCHEME).partition("/") if uri.startswith(SCHEME) else ("", "", "")
        if kind == "context" and ref:
            return await self._context(ref), "text/plain"
        if kind == "memory" and ref:
            memory = await MemoryTools(Graph(self.store, project=self.project)).memory_get(ref)
            return _json({"notice": NOTICE, **frame_fields(memory)}), "application/json"
        if kind == "runs" and ref:
            return _json(await self._run(ref)), "application/json"
        raise NotFoundError(
            f"no resource {_short(uri)}; resources look like loci://context/doc:3, loci://memory/mem:12 or loci://runs/7"
        )

    async def complete(self, template: str, prefix: str, limit: int = 100) -> list[str]:
        """Ids that fill the `{id}` of `template` and start with `prefix`, newest first (for `completion/complete`)."""
        if template == "loci://context/{id}":
            ids = [o.id for o in reversed(await self.contexts.list(("doc", "note", "obs", "turn")))]
        elif template == "loci://memory/{id}":
            sql = "SELECT id FROM memory_nodes WHERE deleted IS NULL AND project = ?"
            ids = [f"mem:{i}" for i in await self._column(sql, limit)]
        elif template == "loci://runs/{id}":
            ids = [str(run.id) for run in await self.runs.list(limit)]
        else:
            return []
        return [i for i in ids if i.startswith(prefix)][:limit]

    async def _column(self, sql: str, limit: int) -> list[Any]:
        rows = await self.store.read(
            lambda db: db.conn.execute(f"{sql} ORDER BY id DESC LIMIT ?", [self.project, limit]).fetchall()
        )
        return [row[0] for row in rows]

    async def _context(self, ref: str) -> str:
        target = Target.parse(ref)
        obj = await self.contexts.check_target(target)
        end = target.end if target.end is not None else obj.lines
        span = await self.contexts.read(target.id, target.start or 1, end, max_tokens=MAX_RESOURCE_TOKENS)
        if span.truncated and span.next_start is not None:
            more = f"{SCHEME}context/{target.id}:{span.next_start}-{end}"
            return f"{span.text}\n[cut at line {span.end}; read on with {more}]"
        return span.text

    async def _list_runs(self) -> list[Resource]:
        return [
            Resource(
                uri=f"{SCHEME}runs/{run.id}",
                name=run.ref,
                description=f"{run.status}: {_short(run.task)}",
                mime_type="application/json",
            )
            for run in await self.runs.list(LISTED)
        ]

    async def _run(self, ref: str) -> dict[str, Any]:
        number = ref.removeprefix("run:")
        if not (number.isascii() and number.isdigit()):
            raise NotFoundError(f"no run {_short(ref)}: run ids look like run:7")
        return (await self.runs.get(number)).to_dict()


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
