"""The `memory` MCP server: the memory verbs of `tools/memory.py`.

Loci's errors are the model's to read (`servers.errors.readable_errors`):
an empty text or an unknown id comes back as an `is_error` result. A tool
that returns stored text shows it to the model quoted as data, never as
instructions, in its text and in its structured content (`servers.quoting`:
each memory's `text` framed as `<stored-notes source="loci">…</stored-notes>`,
beside a `notice` field, as its `outputSchema` says).

With the evolution tools come `memory_refine` and `memory_consolidate`, the
upkeep `loci memory refine|consolidate` does from the shell: long jobs that
report MCP progress, and that a client declaring the tasks extension gets as
a task (servers/tasks.py).
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from loci.memory.engines.sqlite.store import Store
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.embed import Embedder
from loci.memory.graph.graph import Graph
from loci.memory.projects import DEFAULT_PROJECT
from loci.servers.errors import readable_errors
from loci.servers.quoting import QUOTED_TOOLS, framed
from loci.tools.evolution import EvolutionTools
from loci.tools.memory import MemoryTools

__all__ = ["build_memory_server", "memory_server_for"]

INSTRUCTIONS = (
    "A long-term memory graph of facts (semantic), episodes (episodic) and procedures (procedural). "
    "Recall before you answer, remember what you learn, link what belongs together."
)


def build_memory_server(tools: MemoryTools, evolution: EvolutionTools | None = None) -> MCPServer:
    server = MCPServer(name="memory", instructions=INSTRUCTIONS)
    for fn in [*tools.all(), *(evolution.all() if evolution else [])]:
        server.add_tool(readable_errors(framed(fn) if fn.__name__ in QUOTED_TOOLS else fn), name=fn.__name__)
    if evolution is not None:
        for fn in _upkeep(evolution):
            server.add_tool(readable_errors(fn), name=fn.__name__)
    return server


def _upkeep(evolution: EvolutionTools) -> list[Any]:
    """`memory_refine` and `memory_consolidate`, their progress sent as the call's (or its task's)."""

    async def memory_refine(ctx: Context, max_jobs: int | None = None) -> dict[str, Any]:
        """Run the project's queued refinement jobs now: each turns an episode's outcome into procedures.

        max_jobs: stop after this many. Returns how many ran (done, to retry, failed) and the queue after."""
        return await evolution.refine(max_jobs, ctx.report_progress)

    async def memory_consolidate(ctx: Context, dry_run: bool = False) -> dict[str, Any]:
        """Consolidate the memory: decay unused links, prune dead ones, promote or retire procedures.

        dry_run: say what would change and change nothing. Returns the counts of each change."""
        return await evolution.consolidate(dry_run, ctx.report_progress)

    return [memory_refine, memory_consolidate]


def memory_server_for(store: Store, embedder: Embedder | None = None, *, project: str = DEFAULT_PROJECT) -> MCPServer:
    """The memory server over one project of an open store (kept open by the caller for the server's
    lifetime)."""
    graph = Graph(store, embedder, project=project)
    return build_memory_server(MemoryTools(graph), EvolutionTools(Evolution(graph)))
