"""Long tool calls as tasks: the tasks extension of the 2026-07-28 revision (SEP-2663) on Loci's job queue.

A client that declares the extension on its request
(`_meta["io.modelcontextprotocol/clientCapabilities"].extensions["io.modelcontextprotocol/tasks"]`)
and calls a tool of `TASK_TOOLS` (loading a folder, a digest, a run, the
memory's refinement or consolidation) gets a task handle at once
(`resultType: "task"`) instead of waiting; it asks
`tasks/get` for the state, the progress and in the end the tool's result,
and `tasks/cancel` (or `tasks/update` with `{"cancel": true}`, which Loci
reads the same way) stops it. Any other client, and any other tool, is
served as before.

A task is a row of the home's job queue (`memory.jobs`, kind `KIND`), so it
outlives the connection and the server: any server on the home (SQLite file
or PostgreSQL database) answers `tasks/get` for it, and runs it. Each
server's `TaskRunner` claims the queued tasks of its project whose tool it
serves, one at a time, runs the tool as a call would, and writes the result
to the row with the job done. While it runs, the runner renews the row's
lease every `HEARTBEAT_S` with the tool's last progress; a server that dies
leaves a row whose owner is gone, which the next runner to look (every
`POLL_S`) queues again and runs from the start. A cancel marks the row
failed with `CANCELLED`; the runner sees it at its next heartbeat and stops
the tool. The task id is the row's key, a random UUID (the row's number
would let one client guess another's task): the id and the project the
token reaches are what finds a task.

This module is the whole of it, written on the SDK's extension point
(`mcp.server.extension.Extension`: three request methods and a `tools/call`
interceptor) so that the SDK's own tasks extension can take its place when
it lands (modelcontextprotocol/python-sdk#2806): the queue stays, the wire
moves.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any, Final

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding, compose_tool_call_handler
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolRequestParams, CallToolResult, RequestParams, TextContent
from pydantic import Field

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import StoreError
from loci.memory.jobs.queue import Job, JobLost, Jobs

__all__ = ["CANCELLED", "EXTENSION", "KIND", "TASK_TOOLS", "LociTasks", "TaskRunner", "cancel_task", "install"]

MISSING_CAPABILITY = -32021  # SEP-2663: a tasks method from a request that did not declare the extension

log = logging.getLogger("loci.server")

EXTENSION: Final = "io.modelcontextprotocol/tasks"
KIND: Final = "mcp_task"
TASK_TOOLS: Final = frozenset({"context_load", "digest", "run_task", "memory_refine", "memory_consolidate"})
CANCELLED: Final = "cancelled by the client"
HEARTBEAT_S: Final = 0.5
POLL_S: Final = 2.0
POLL_INTERVAL_MS: Final = 1000


def install(server: Server[Any], extension: Extension) -> None:
    """Serve `extension` on a low-level `server` as `MCPServer(extensions=[...])` does: its methods, its
    capability, and its interceptor around the `tools/call` handler the server has."""
    for method in extension.methods():
        server.add_request_handler(method.method, method.params_type, method.handler)
    server.extensions[extension.identifier] = extension.settings()
    call = server.get_request_handler("tools/call")
    assert call is not None, "the server serves tools/call"
    server.add_request_handler("tools/call", call.params_type, compose_tool_call_handler([extension], call.handler))


class TaskParams(RequestParams):
    """`tasks/get` and `tasks/cancel`: the task's id (and the `requestState` Loci never sets)."""

    task_id: str = Field(alias="taskId")
    request_state: str | None = Field(default=None, alias="requestState")


class UpdateParams(TaskParams):
    """`tasks/update`: input for the task (Loci's tasks ask none), or `cancel: true`."""

    input_responses: dict[str, Any] | None = Field(default=None, alias="inputResponses")
    cancel: bool = False


class LociTasks(Extension):
    """The extension: creates tasks for the calls it takes, and answers for the tasks of the request's project."""

    identifier = EXTENSION

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", TaskParams, self.get),
            MethodBinding("tasks/update", UpdateParams, self.update),
            MethodBinding("tasks/cancel", TaskParams, self.cancel),
        )

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if params.name not in TASK_TOOLS or not _declared(ctx) or params.name not in ctx.lifespan_context.routes:
            return await call_next(ctx)
        jobs, key = _jobs(ctx), uuid.uuid4().hex
        await jobs.enqueue(KIND, {"tool": params.name, "arguments": params.arguments or {}}, key=f"{KIND}:{key}")
        ctx.lifespan_context.tasks.wake()
        return {"resultType": "task", **_task(await _row(jobs, key))}

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        _require_declared(ctx)
        row = await _row(_jobs(ctx), params.task_id)
        if row is None:
            raise MCPError(code=INVALID_PARAMS, message=f"no task {params.task_id} in this project")
        return {"resultType": "complete", **_task(row)}

    async def update(self, ctx: ServerRequestContext[Any, Any], params: UpdateParams) -> HandlerResult:
        _require_declared(ctx)
        return await (self.cancel(ctx, params) if params.cancel else _acknowledged())

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        _require_declared(ctx)
        await cancel_task(_jobs(ctx), params.task_id)
        return await _acknowledged()


async def cancel_task(jobs: Jobs, task_id: str) -> None:
    """Mark the task cancelled if it is queued or running: a runner never claims it, or stops it at its heartbeat."""
    sql = (
        "UPDATE jobs SET status = 'failed', error = ?, owner = NULL, lease_until = NULL, updated = ?, finished = ?"
        " WHERE kind = ? AND key = ? AND project = ? AND status IN ('queued', 'running')"
    )
    now = time.time()
    args = [CANCELLED, now, now, KIND, f"{KIND}:{task_id}", jobs.project]
    await jobs.store.write(lambda db: db.conn.execute(sql, args))


class _Progress(Context):  # type: ignore[misc]
    """The context a task's tool runs with: its progress goes to the task's row, not to a request."""

    def __init__(self, runner: TaskRunner, job: Job) -> None:
        super().__init__()
        self._runner, self._job = runner, job

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        shown = f"{progress:g}" + (f" of {total:g}" if total is not None else "") + (f": {message}" if message else "")
        self._runner.progress[self._job.id] = shown


class TaskRunner:
    """Runs the queued tasks of one project whose tools this server serves, and keeps their rows current."""

    def __init__(self) -> None:
        self.progress: dict[int, str] = {}
        self._wake = anyio.Event()

    def wake(self) -> None:
        self._wake.set()

    async def serve(self, store: Store, project: str, routes: Mapping[str, Any]) -> None:
        """Claim and run tasks until cancelled: at once when one is queued here, else every `POLL_S`."""
        jobs = Jobs(store, project=project)
        while True:
            try:
                await self._claimed(jobs, routes)
            except StoreError as exc:  # a home busy or briefly gone: the tasks wait, the server goes on
                log.warning("tasks: %s; looking again in %s s", exc, POLL_S)
            with anyio.move_on_after(POLL_S):
                await self._wake.wait()
            self._wake = anyio.Event()

    async def _claimed(self, jobs: Jobs, routes: Mapping[str, Any]) -> None:
        """Run the project's queued tasks (and those a dead server left) whose tool is served here, in turn."""
        if not await _pending(jobs):
            return
        await jobs.reclaim()
        after = 0
        while (job := await jobs.claim((KIND,), after=after)) is not None:
            after = job.id
            if job.payload.get("tool") not in routes:
                await jobs.release(job, "this server does not serve the task's tool")
                continue
            await self._run(jobs, job, routes[job.payload["tool"]])

    async def _run(self, jobs: Jobs, job: Job, server: Any) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(self._heartbeat, jobs, job, group.cancel_scope)
            try:
                result = await server.call_tool(
                    job.payload["tool"], job.payload.get("arguments", {}), _Progress(self, job)
                )
                answer = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            except ToolError as exc:
                answer = CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True).model_dump(
                    mode="json", by_alias=True, exclude_none=True
                )
            except Exception as exc:  # a crash is the task's failure, never the runner's
                await jobs.fail(job, f"{type(exc).__name__}: {exc}")
                group.cancel_scope.cancel()
                return
            finally:
                self.progress.pop(job.id, None)
            with suppress(JobLost):  # cancelled as it finished: the row says cancelled
                await jobs.complete(job, lambda _conn: answer)
            group.cancel_scope.cancel()

    async def _heartbeat(self, jobs: Jobs, job: Job, scope: anyio.CancelScope) -> None:
        """Renew the lease with the progress every `HEARTBEAT_S`; stop the tool once the row is not ours (cancelled)."""
        sql = (
            "UPDATE jobs SET lease_until = ?, result = ?, updated = ? WHERE id = ? AND owner = ? AND status = 'running'"
        )
        while True:
            await anyio.sleep(HEARTBEAT_S)
            now, progress = time.time(), json.dumps({"progress": self.progress.get(job.id)})
            args = [now + jobs.limits.lease_s, progress, now, job.id, job.owner]
            try:
                renewed = await jobs.store.write(lambda db, args=args: db.conn.execute(sql, args).rowcount)
            except StoreError as exc:
                log.warning("tasks: %s; renewing the lease of task %s again shortly", exc, job.key)
                continue
            if renewed == 0:
                scope.cancel()
                return


async def _pending(jobs: Jobs) -> bool:
    """Whether the project has a task queued or running: the runner writes (reclaims, claims) only then."""
    sql = "SELECT 1 FROM jobs WHERE kind = ? AND project = ? AND status IN ('queued', 'running') LIMIT 1"
    return bool(await jobs.store.read(lambda db: db.conn.execute(sql, [KIND, jobs.project]).fetchall()))


def _require_declared(ctx: ServerRequestContext[Any, Any]) -> None:
    """The tasks methods answer only a request that declares the extension (SEP-2663's missing capability)."""
    if not _declared(ctx):
        raise MCPError(
            code=MISSING_CAPABILITY,
            message=f"the tasks extension is not declared: name {EXTENSION} in the request's client capabilities",
            data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
        )


def _declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and EXTENSION in (capabilities.extensions or {})


def _jobs(ctx: ServerRequestContext[Any, Any]) -> Jobs:
    return Jobs(ctx.lifespan_context.store, project=ctx.lifespan_context.project)


async def _row(jobs: Jobs, task_id: str) -> dict[str, Any] | None:
    sql = "SELECT * FROM jobs WHERE kind = ? AND key = ? AND project = ?"
    rows = await jobs.store.read(lambda db: list(db.query(sql, [KIND, f"{KIND}:{task_id}", jobs.project])))
    return rows[0] if rows else None


async def _acknowledged() -> dict[str, Any]:
    return {"resultType": "complete"}


def _task(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row as SEP-2663's `DetailedTask`: the status, when, and the result or error once there is one."""
    task: dict[str, Any] = {
        "taskId": row["key"].removeprefix(f"{KIND}:"),
        "createdAt": _iso(row["created"]),
        "lastUpdatedAt": _iso(row["updated"]),
        "ttlSeconds": None,
        "pollIntervalMilliseconds": POLL_INTERVAL_MS,
    }
    status, error = row["status"], row["error"] or ""
    if status == "done":
        return {**task, "status": "completed", "result": json.loads(row["result"])}
    if status == "failed" and error == CANCELLED:
        return {**task, "status": "cancelled", "statusMessage": CANCELLED}
    if status == "failed":
        return {**task, "status": "failed", "statusMessage": error, "error": {"code": -32603, "message": error}}
    progress = json.loads(row["result"] or "{}").get("progress") if status == "running" else None
    message = f"{row['payload'] and json.loads(row['payload']).get('tool')} " + (progress or status)
    return {**task, "status": "working", "statusMessage": message}


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
