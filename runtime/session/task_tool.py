"""`run_task`: the whole Loci agent as one MCP tool of `loci serve`.

The model is loaded on first use, from `--model`, and runs one task at a
time. Files the task names must lie under a `--root` (symlinks resolved, so
an escape is refused whatever the path looks like); without roots the agent
reads only what is already loaded. Each task runs through `Session.run` on
the served home (the server's open store: no second writer on its file), so
it leaves a run record and an episode. Refusals (a path outside the roots, a
missing file, a bad `max_turns`) reach the client as readable errors.

While it runs, the tool reports progress after each turn (the turn, out of
`max_turns`, and the tokens spent so far) and logs the turn to the client.
A client's cancellation stops the run where it is: the turn loop is
cancelled, what it stored stays stored, and the run is recorded as
`cancelled`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from loci.memory.context.paths import Roots
from loci.memory.engines.base import Engine
from loci.memory.errors import UsageError
from loci.memory.projects import DEFAULT_PROJECT
from loci.runtime.loop.records import Limits, RunConfig, TurnTrace
from loci.runtime.models.base import Model
from loci.runtime.models.specs import DEFAULT_SPEC, load_model
from loci.runtime.session.session import open_session
from loci.servers.app import LociState
from loci.servers.errors import readable_errors

__all__ = ["MAX_TURNS", "TaskRunner", "run_task_set"]

MAX_TURNS = 64


def run_task_set(state: LociState) -> MCPServer:
    """The `run` tool set of `loci serve`: a runner over the served home, closed with the server."""
    options = state.options
    runner = TaskRunner(
        options.get("model", DEFAULT_SPEC),
        state.store,
        state.roots,
        mcp_config=options.get("mcp_config"),
        project=state.project,
    )
    state.stack.push_async_callback(runner.aclose)
    return runner.tool_set(state)


class TaskRunner:
    """The `run_task` tool set: one model, loaded on first use, one task at a time."""

    def __init__(
        self,
        spec: str,
        db: Path | Engine,
        roots: list[Path] | Roots,
        *,
        mcp_config: str | Path | None = None,
        project: str = DEFAULT_PROJECT,
    ) -> None:
        self.spec, self.db, self.mcp_config, self.project = spec, db, mcp_config, project
        self.roots = roots if isinstance(roots, Roots) else Roots(roots) if roots else Roots(None)
        self._model: Model | None = None
        self._lock = anyio.Lock()
        self._state: LociState | None = None

    def tool_set(self, state: LociState) -> MCPServer:
        """The factory `servers.app.build_app` calls in its lifespan."""
        self._state = state
        server = MCPServer(name="run")
        server.add_tool(readable_errors(self.run_task), name="run_task")
        return server

    async def run_task(
        self,
        task: str,
        ctx: Context,
        files: list[str] | None = None,
        max_turns: Annotated[int, Field(ge=1, le=MAX_TURNS)] = 8,
    ) -> dict[str, Any]:
        """Run the Loci agent on a task: it browses the given files with its tools and answers with evidence.

        files: paths under the server's --root directories. max_turns: turns before it must answer (1 to 64)."""
        if not task.strip():
            raise UsageError("the task is empty; say what the agent should do")
        paths = [self.allowed(name) for name in files or []]
        async with self._lock:
            if self._model is None:
                self._model = await load_model(self.spec)
            spent = 0

            async def progress(trace: TurnTrace) -> None:
                nonlocal spent
                spent += trace.evaluated_tokens + trace.completion_tokens
                message = f"turn {trace.turn} of at most {max_turns}, {spent} tokens"
                await ctx.report_progress(trace.turn, max_turns, message)
                if self._state is not None:
                    await self._state.log.send(ctx, "info", f"run_task: {message}")

            config = RunConfig(limits=Limits(max_turns=max_turns), mcp_config=self.mcp_config)
            session_in = open_session(self._model, self.db, config, files=paths, on_turn=progress, project=self.project)
            async with session_in as session:
                run_id, result = await session.run(task, source="mcp")
        return {"run": f"run:{run_id}", **result.as_json()}

    def allowed(self, name: str) -> Path:
        """The real path of `name` if a root allows it, else a `UsageError` saying why not."""
        if not self.roots:
            raise UsageError(f"cannot read {name}: this server reads files only under a --root")
        return self.roots.resolve(name)

    async def aclose(self) -> None:
        if self._model is not None:
            await self._model.aclose()
            self._model = None
