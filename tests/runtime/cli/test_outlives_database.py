"""`loci serve --http` and `loci worker` outlive their database: a PostgreSQL restart, a SQLite lock held too long.

Real processes on a real home, under a small bounded load of writes and reads: while the database is away
each request is answered (a JSON-RPC error that says so), both processes keep running, every write a server
acknowledged is stored, and once the database is back the writes go through again and the worker runs jobs.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx

from loci.bench.servers.mcp import http_server
from loci.bench.servers.postgres_cluster import running_cluster
from loci.bench.servers.team import TeamClient
from loci.memory.engines.select import use_engine
from loci.memory.jobs.queue import Jobs
from loci.servers.errors import STORE_UNAVAILABLE
from tests.conftest import new_database

CLIENTS = 3
MOST_CALLS = 300  # each client's, so the load stays bounded whatever happens


@dataclass
class Load:
    acknowledged: list[int] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)  # each JSON-RPC error a server answered with
    refused: list[str] = field(default_factory=list)  # the text of each tool error (none is expected)
    not_written: list[str] = field(default_factory=list)  # the texts of the writes refused as not stored
    unanswered: int = 0
    calls: int = 0


async def _client(url: str, token: str, n: int, stop: anyio.Event, load: Load) -> None:
    async with httpx.AsyncClient(timeout=httpx.Timeout(60.0)) as http:
        client = TeamClient(http, url, token)
        await client.open()
        for i in range(MOST_CALLS):
            if stop.is_set():
                return
            load.calls += 1
            write = i % 2 == 0
            tool, arguments = ("memory_remember", {"text": f"outage note {n}-{i}"}) if write else ("memory_get", {})
            if not write:
                arguments = {"id": f"mem:{load.acknowledged[-1]}"} if load.acknowledged else {"id": "mem:1"}
            try:
                answer = await _answer(http, client, i, tool, arguments)
            except httpx.HTTPStatusError as exc:
                load.refused.append(exc.response.text)
                continue
            except httpx.TransportError:
                load.unanswered += 1
                continue
            if "error" in answer:  # the database is unavailable: a JSON-RPC error, never a tool's result
                load.errors.append(answer["error"])
                if write and not answer["error"].get("data", {}).get("inDoubt"):
                    load.not_written.append(arguments["text"])
            elif answer["result"].get("isError"):
                load.refused.append(answer["result"]["content"][0]["text"])
            elif write:
                load.acknowledged.append(int(answer["result"]["structuredContent"]["id"].removeprefix("mem:")))


async def _answer(http: httpx.AsyncClient, client: TeamClient, n: int, tool: str, arguments: Any) -> dict[str, Any]:
    """The JSON-RPC message that answers a call of `tool` in `client`'s session: a result or an error."""
    body = {"jsonrpc": "2.0", "id": 1000 + n, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    response = await http.post(client.url, json=body, headers=client.headers)
    response.raise_for_status()
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return json.loads([line[5:] for line in response.text.splitlines() if line.startswith("data:")][-1])
    return response.json()


async def _until(check: Any, seconds: float) -> None:
    with anyio.fail_after(seconds):
        while not await check():
            await anyio.sleep(0.1)


@contextmanager
def _worker(db: str, log: Path, *flags: str, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    command = [sys.executable, "-m", "loci.runtime.cli.main", "worker", "--db", db, "--all-projects", *flags]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=out, env={**os.environ, **(env or {})})
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def _load_through(url: str, token: str, load: Load, outage: Any) -> None:
    """Run the clients; once writes go through, `outage()` (in a thread); then until writes go through again."""
    stop = anyio.Event()
    async with anyio.create_task_group() as group:
        for n in range(CLIENTS):
            group.start_soon(_client, url, token, n, stop, load)

        async def acknowledged(count: int) -> Any:
            async def check() -> bool:
                return len(load.acknowledged) >= count

            return check

        await _until(await acknowledged(3), 60)
        await anyio.to_thread.run_sync(outage)
        await _until(await acknowledged(len(load.acknowledged) + 6), 90)
        stop.set()


async def _stored(db: str, ids: list[int], texts: list[str]) -> tuple[set[int], list[str]]:
    """Which of the acknowledged `ids` are stored, and which of the refused `texts` are (none should be)."""
    async with use_engine(db) as store:
        sql = f"SELECT id FROM memory_nodes WHERE id IN ({','.join('?' * len(ids))})"
        rows = await store.read(lambda c: c.execute(sql, ids).fetchall())
        found = f"SELECT text FROM memory_nodes WHERE text IN ({','.join('?' * len(texts))})"
        written = await store.read(lambda c: c.execute(found, texts).fetchall()) if texts else []
    return {row[0] for row in rows}, [row[0] for row in written]


def _unavailable(error: dict[str, Any], says: str) -> bool:
    return error["code"] == STORE_UNAVAILABLE and says in error["message"] and error["data"]["retryAfter"] > 0


def _started(log: Path) -> bool:
    return "loci worker: running" in log.read_text(errors="replace")


async def test_a_server_and_a_worker_outlive_a_postgresql_restart(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    with running_cluster() as cluster:
        db = new_database(cluster.url)
        async with use_engine(db):
            pass  # made and migrated before the processes start
        server = http_server(db)  # type: ignore[arg-type]
        with server as (url, token), _worker(db, log, "--poll", "60") as worker:
            with anyio.fail_after(180):
                await _until(lambda: anyio.to_thread.run_sync(_started, log), 60)
                load = Load()
                await _load_through(url, token, load, cluster.restart)
                # The worker hears of a job queued now through its listener, which the restart dropped (it polls
                # only every minute): it listened again.
                async with use_engine(db) as store:
                    job = await Jobs(store).enqueue("refine", {"episode": 999_999_999})

                    async def claimed() -> bool:
                        return (await Jobs(store).get(job or 0))["attempts"] > 0

                    await _until(claimed, 30)
            assert worker.poll() is None and server.process.poll() is None
        stored, refused_but_stored = await _stored(db, load.acknowledged, load.not_written)
    assert load.unanswered == 0 and refused_but_stored == []
    assert set(load.acknowledged) <= stored and len(load.acknowledged) >= 9
    assert load.refused == [] and all(_unavailable(error, "unavailable") for error in load.errors), load.errors[:3]
    written = log.read_text(errors="replace")
    assert "unavailable" in written and "Traceback" not in written


async def test_a_server_and_a_worker_outlive_a_sqlite_lock_held_past_the_busy_timeout(tmp_path: Path) -> None:
    db, log = str(tmp_path / "loci.db"), tmp_path / "worker.log"
    env = {**os.environ, "LOCI_BUSY_TIMEOUT": "0.5"}
    async with use_engine(db):
        pass

    def hold_the_lock() -> None:  # another process's BEGIN IMMEDIATE, held past the busy timeout
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        threading.Event().wait(3)
        holder.execute("COMMIT")
        holder.close()

    server = http_server(Path(db), env=env)
    with server as (url, token), _worker(db, log, "--poll", "0.2", env=env) as worker:
        with anyio.fail_after(120):
            await _until(lambda: anyio.to_thread.run_sync(_started, log), 60)
            load = Load()
            await _load_through(url, token, load, hold_the_lock)
        assert worker.poll() is None and server.process.poll() is None
    stored, refused_but_stored = await _stored(db, load.acknowledged, load.not_written)
    assert load.unanswered == 0 and set(load.acknowledged) <= stored and len(load.acknowledged) >= 9
    assert refused_but_stored == [] and load.not_written
    assert load.refused == [] and load.errors, load.errors[:3]
    assert all(_unavailable(error, "locked by another process") for error in load.errors), load.errors[:3]
    written = log.read_text(errors="replace")
    assert "unavailable" in written and "Traceback" not in written
