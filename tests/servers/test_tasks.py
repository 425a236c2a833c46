"""Long tool calls as tasks (servers/tasks.py) over `loci serve --http`, on SQLite and PostgreSQL.

A client that declares the tasks extension and loads a folder gets a task
handle at once; `tasks/get` on that server, and on another server of the
home after the first is killed, reports it done with the tool's result; a
task the killed server was running when it died is run again and finished
by the other; a cancelled task is reported cancelled and never run. The
same holds for a digest (its server killed outright once it is done) and
for the memory's consolidation and refinement, which report progress. A
client that does not declare the extension gets the tool's result, as
before.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client
from mcp.server.mcpserver import MCPServer

from loci.memory.engines.select import use_engine
from loci.memory.engines.sqlite.store import Store
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph
from loci.memory.jobs.queue import Jobs
from loci.servers.app import build_app
from loci.servers.tasks import CANCELLED, KIND, TaskRunner, cancel_task
from tests.runtime.cli.test_serve_http import Served, start, stop
from tests.runtime.digest_helpers import write_doc

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def _post(
    served: Served, ident: int, method: str, params: dict[str, Any], name: str, capabilities: dict[str, Any] = TASKS
) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": meta}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28"}
    headers |= {"Mcp-Method": method, "Mcp-Name": name}
    return json.loads(httpx.post(served.url, json=body, headers=headers, timeout=60).text)


async def _finished(served: Served, task_id: str) -> dict[str, Any]:
    """`tasks/get` until the task is no longer working (bounded: a server that never finishes it fails the test)."""
    with anyio.fail_after(60):
        while (task := _post(served, 9, "tasks/get", {"taskId": task_id}, task_id)["result"])["status"] == "working":
            await anyio.lowlevel.checkpoint()
    return task


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(3):
        (folder / f"note{i}.txt").write_text(f"note {i}: the harbour lantern\n", encoding="utf-8")
    return folder


def _stopped(served: Served) -> None:
    stop(served.process)
    assert served.process.stderr is not None
    served.process.stderr.close()


async def test_a_folder_import_is_a_task_another_server_reports_and_finishes(tmp_path: Path, home: str) -> None:
    folder = _folder(tmp_path)
    async with use_engine(home):
        pass  # the home exists before either server opens it
    first = start(tmp_path, "--root", str(folder), db=home)  # type: ignore[arg-type]
    try:
        handle = _post(
            first, 1, "tools/call", {"name": "context_load", "arguments": {"path": str(folder)}}, "context_load"
        )
        done_on_first = await _finished(first, handle["result"]["taskId"])
    finally:
        _stopped(first)
    async with use_engine(home) as store:  # a task the first server was running when it was killed
        jobs = Jobs(store)
        await jobs.enqueue(KIND, {"tool": "context_load", "arguments": {"path": str(folder)}}, key=f"{KIND}:orphan")
        dead = f"{socket.gethostname()}:{first.process.pid}:gone"
        sql = "UPDATE jobs SET status = 'running', owner = ?, lease_until = ?, attempts = 1 WHERE key = ?"
        await store.write(lambda db: db.conn.execute(sql, [dead, 9e9, f"{KIND}:orphan"]))
    second = start(tmp_path, "--root", str(folder), db=home)  # type: ignore[arg-type]
    try:
        reported_by_second = await _finished(second, handle["result"]["taskId"])
        orphan = await _finished(second, "orphan")
    finally:
        _stopped(second)
    assert handle["result"]["resultType"] == "task" and handle["result"]["status"] == "working"
    assert done_on_first["status"] == "completed" and done_on_first["result"]["structuredContent"]["loaded_count"] == 3
    assert reported_by_second == done_on_first
    assert orphan["status"] == "completed" and orphan["result"]["structuredContent"]["loaded_count"] == 3


async def test_a_cancelled_task_is_reported_cancelled_and_never_runs(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    async with await Store.open(db) as store:  # queued for a tool this server does not serve: it waits
        await Jobs(store).enqueue(KIND, {"tool": "context_load", "arguments": {"path": "."}}, key=f"{KIND}:waiting")
    served = start(tmp_path, "--tools", "memory", db=db)
    try:
        waiting = _post(served, 1, "tasks/get", {"taskId": "waiting"}, "waiting")["result"]
        cancelled = _post(served, 2, "tasks/cancel", {"taskId": "waiting"}, "waiting")["result"]
        after = _post(served, 3, "tasks/get", {"taskId": "waiting"}, "waiting")["result"]
        unknown = _post(served, 4, "tasks/get", {"taskId": "nope"}, "nope")["error"]
        undeclared = [
            _post(served, 5 + n, method, {"taskId": "waiting"}, "waiting", capabilities={})["error"]["code"]
            for n, method in enumerate(("tasks/get", "tasks/update", "tasks/cancel"))
        ]
    finally:
        _stopped(served)
    assert waiting["status"] == "working" and cancelled == {"resultType": "complete"} | _meta_of(cancelled)
    assert all(code == -32021 for code in undeclared)  # a request that did not declare the extension
    assert after["status"] == "cancelled" and "result" not in after
    assert unknown["message"] == "no task nope in this project"


def _meta_of(result: dict[str, Any]) -> dict[str, Any]:
    return {"_meta": result["_meta"]} if "_meta" in result else {}


async def test_a_client_without_the_extension_gets_the_result_at_once(store: Store, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    async with Client(build_app(store, roots=[folder])) as client:
        loaded = await client.call_tool("context_load", {"path": str(folder)})
    assert loaded.structured_content["loaded_count"] == 3


async def test_cancelling_a_running_task_stops_its_tool(store: Store) -> None:
    started, stopped = anyio.Event(), anyio.Event()

    async def digest() -> str:
        started.set()
        try:
            await anyio.Event().wait()  # a long job: it ends only when cancelled
        finally:
            stopped.set()
        return "never"

    slow = MCPServer("slow")
    slow.add_tool(digest)
    jobs, runner = Jobs(store), TaskRunner()
    await jobs.enqueue(KIND, {"tool": "digest", "arguments": {}}, key=f"{KIND}:long")
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(runner.serve, store, "default", {"digest": slow})
            await started.wait()
            await cancel_task(jobs, "long")
            await stopped.wait()
            group.cancel_scope.cancel()
    row = (await store.read(lambda db: list(db.query("SELECT status, error FROM jobs WHERE key = 'mcp_task:long'"))))[0]
    assert row == {"status": "failed", "error": CANCELLED}


async def _orphaned(home: str, tool: str, arguments: dict[str, Any], task_id: str) -> None:
    """Queue a task as if a server that is gone had claimed it and died running it."""
    async with use_engine(home) as store:
        await Jobs(store).enqueue(KIND, {"tool": tool, "arguments": arguments}, key=f"{KIND}:{task_id}")
        dead = f"{socket.gethostname()}:999999999:gone"
        sql = "UPDATE jobs SET status = 'running', owner = ?, lease_until = ?, attempts = 1 WHERE key = ?"
        await store.write(lambda db: db.conn.execute(sql, [dead, 9e9, f"{KIND}:{task_id}"]))


async def test_a_digest_task_outlives_its_killed_server_and_consolidation_is_finished_by_another(
    tmp_path: Path, home: str
) -> None:
    write_doc(tmp_path / "log.txt")
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["7316"]), encoding="utf-8")  # the direct strategy's one call
    serving = ("--root", str(tmp_path), "--model", f"scripted:{script}")
    async with use_engine(home):
        pass  # the home exists before either server opens it
    first = start(tmp_path, *serving, db=home)  # type: ignore[arg-type]
    try:
        question = {"paths": ["log.txt"], "question": "What is the gate code?", "strategy": "direct"}
        handle = _post(first, 1, "tools/call", {"name": "digest", "arguments": question}, "digest")["result"]
        done_on_first = await _finished(first, handle["taskId"])
    finally:
        first.process.kill()  # no goodbye: SIGKILL
        first.process.wait(timeout=15)
        _stopped(first)
    await _orphaned(home, "memory_consolidate", {"dry_run": True}, "consolidation")
    second = start(tmp_path, *serving, db=home)  # type: ignore[arg-type]
    try:
        reported_by_second = await _finished(second, handle["taskId"])
        consolidated = await _finished(second, "consolidation")
    finally:
        _stopped(second)
    assert handle["resultType"] == "task" and handle["status"] == "working"
    assert done_on_first["status"] == "completed" and done_on_first["result"]["structuredContent"]["answer"] == "7316"
    assert reported_by_second == done_on_first
    assert consolidated["status"] == "completed"
    assert consolidated["result"]["structuredContent"]["dry_run"] is True


async def test_refinement_as_a_task_is_cancelled_with_tasks_update(tmp_path: Path, home: str) -> None:
    async with use_engine(home):
        pass
    served = start(tmp_path, "--tools", "context", db=home)  # type: ignore[arg-type]  # no memory_refine: it waits
    try:
        await _orphaned(home, "memory_refine", {}, "refine")  # left running by a dead server: queued again here
        waiting = _post(served, 1, "tasks/get", {"taskId": "refine"}, "refine")["result"]
        cancelled = _post(served, 2, "tasks/update", {"taskId": "refine", "cancel": True}, "refine")["result"]
        after = _post(served, 3, "tasks/get", {"taskId": "refine"}, "refine")["result"]
    finally:
        _stopped(served)
    assert waiting["status"] == "working" and waiting["statusMessage"].startswith("memory_refine")
    assert cancelled == {"resultType": "complete"} | _meta_of(cancelled)
    assert after["status"] == "cancelled"


async def test_refinement_over_mcp_runs_the_queued_jobs_and_reports_each(store: Store) -> None:
    evolution = Evolution(Graph(store))
    for task in ("tidy the notes", "file the receipts"):
        await evolution.episodes.write(Episode(task, [Step("memory_recall", {"query": "x"})], outcome=1.0))
    heard: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append((done, total, message))

    async with Client(build_app(store, ["memory"])) as client:
        refined = await client.call_tool("memory_refine", {}, progress_callback=progress)
        again = await client.call_tool("memory_refine", {})
    assert refined.structured_content["ran"]["done"] == 2 and refined.structured_content["queue"]["queued"] == 0
    assert heard == [(1, 2, "refinement jobs run"), (2, 2, "refinement jobs run")]
    assert again.structured_content["ran"]["done"] == 0
