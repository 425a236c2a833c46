"""The `digest` MCP tool that `loci serve` offers beside `run_task`.

It runs one digest job (`runtime.digest.run`) and sends a progress notification
after every chunk: tokens read out of the total, with the chunk and the
model calls in the message. Files must lie under one of the server's
`--root` directories, as for `run_task`. The job runs on the served home
(the server's open store, not a second one on its file). The model is loaded from the
server's `--model` for each call and closed after it, and calls run one at
a time. A cancelled call leaves its job `interrupted`, resumable with
`loci digest --resume`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as MCPToolError

from loci.memory.context.paths import Roots
from loci.memory.engines.base import Engine
from loci.memory.errors import LociError, UsageError
from loci.memory.projects import DEFAULT_PROJECT
from loci.runtime.digest.run import digest
from loci.runtime.digest.settings import Progress
from loci.runtime.models.specs import DEFAULT_SPEC
from loci.servers.app import LociState

__all__ = ["DigestTool", "digest_set"]


def digest_set(state: LociState) -> MCPServer:
    """The `digest` tool set of `loci serve`, over the served home and its roots."""
    server = MCPServer(name="digest")
    tool = DigestTool(state.options.get("model", DEFAULT_SPEC), state.store, state.roots, project=state.project)
    server.add_tool(tool.digest)
    return server


class DigestTool:
    """Holds the server's model spec, home and roots; `digest` is the tool function."""

    def __init__(
        self, spec: str, db: Path | Engine, roots: list[Path] | Roots, *, project: str = DEFAULT_PROJECT
    ) -> None:
        self.spec, self.db, self.project = spec, db, project
        self.roots = roots if isinstance(roots, Roots) else Roots(roots) if roots else Roots(None)
        self._lock = anyio.Lock()

    async def digest(
        self,
        paths: list[str],
        question: str,
        ctx: Context,
        strategy: str = "auto",
        chunk_tokens: int | None = None,
        memory_tokens: int | None = None,
    ) -> dict[str, Any]:
        """Answer a question over long documents (text, Markdown, code, JSON/JSONL, PDF), with evidence.

        paths: files under the server's --root directories. strategy: stream (read every chunk into a
        bounded memory), navigate (browse with the context tools), direct (one call) or auto (picks one).
        chunk_tokens, memory_tokens: stream's chunk size and memory bound (default: what fits the window).
        Returns the answer, the line ranges it rests on, and the job id (resumable with loci digest --resume)."""
        try:
            return await self._digest(paths, question, ctx, strategy, chunk_tokens, memory_tokens)
        except LociError as exc:  # the client reads what went wrong, not "Error executing tool"
            raise MCPToolError(str(exc)) from exc

    async def _digest(
        self,
        paths: list[str],
        question: str,
        ctx: Context,
        strategy: str,
        chunk_tokens: int | None,
        memory_tokens: int | None,
    ) -> dict[str, Any]:
        files = [self._allowed(name) for name in paths]

        async def report(progress: Progress) -> None:
            chunks = f"chunk {progress.chunks}/{progress.chunks_total}"
            message = f"job {progress.job_id} {progress.strategy}: {chunks}, {progress.model_calls} model calls"
            await ctx.report_progress(progress.tokens_read, progress.tokens_total or None, message)

        async with self._lock:
            sizes = {"chunk_tokens": chunk_tokens, "memory_tokens": memory_tokens}
            return await digest(
                files,
                question,
                model=self.spec,
                db=self.db,
                strategy=strategy,
                progress=report,
                project=self.project,
                **sizes,
            )

    def _allowed(self, name: str) -> Path:
        if not self.roots:
            raise UsageError(f"cannot read {name}: this server reads files only under a --root")
        return self.roots.resolve(name)
