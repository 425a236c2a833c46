"""Two `loci serve memory --http` over one PostgreSQL database, one of them killed with SIGKILL mid-write.

Clients write through both servers at once; when the first has acknowledged
a number of writes, it is killed while its clients are still writing. Every
write a client saw acknowledged is in the database, under the id it was
told, and no write is there twice: a write is one transaction, committed
before the server answers, and one the server died inside is either
committed whole or not at all. The other server serves on throughout, and
reads what was written through the one that died.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import psycopg

from loci.bench.servers.team import TeamClient
from tests.runtime.cli.test_serve_http import start, stop

CLIENTS = 4  # per server
BEFORE_KILL = 30  # writes the first server acknowledges before it is killed
SURVIVOR_WRITES = 40  # writes each client of the second server makes


async def _writer(
    url: str, name: str, limit: int, acknowledged: list[tuple[str, str]], failed: list[str], reached: anyio.Event
) -> None:
    """Write `limit` notes through `url`, noting each acknowledged one (`reached` once `BEFORE_KILL` are); stop at
    the first call without an answer."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as http:
        client = TeamClient(http, url)
        await client.open()
        for i in range(limit):
            text = f"kill note {name} {i}"
            try:
                result = await client.call("memory_remember", {"text": text})
            except httpx.HTTPError as exc:
                failed.append(type(exc).__name__)
                return
            assert not result["isError"], result
            acknowledged.append((result["structuredContent"]["id"], text))
            if len(acknowledged) >= BEFORE_KILL:
                reached.set()


async def test_a_server_killed_mid_write_loses_no_acknowledged_write_and_writes_none_twice(
    tmp_path: Path, postgres_url: str
) -> None:
    doomed = start(tmp_path, "memory", db=postgres_url)
    survivor = start(tmp_path, "memory", db=postgres_url)
    through_doomed: list[tuple[str, str]] = []
    through_survivor: list[tuple[str, str]] = []
    doomed_failed: list[str] = []
    survivor_failed: list[str] = []
    reached, never = anyio.Event(), anyio.Event()
    try:
        with anyio.fail_after(240):
            async with anyio.create_task_group() as group:
                for c in range(CLIENTS):
                    name, writes = f"survivor-{c}", SURVIVOR_WRITES
                    group.start_soon(_writer, doomed.url, f"doomed-{c}", 10_000, through_doomed, doomed_failed, reached)
                    group.start_soon(_writer, survivor.url, name, writes, through_survivor, survivor_failed, never)
                await reached.wait()
                doomed.process.kill()
                killed_after = len(through_doomed)
            async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as http:
                reader = TeamClient(http, survivor.url)
                await reader.open()
                found = await reader.call("memory_recall", {"query": f"kill note doomed 0 {through_doomed[0][1][-1]}"})
    finally:
        doomed.process.kill()
        doomed.process.wait()
        stop(survivor.process)
        for server in (doomed, survivor):
            assert server.process.stderr is not None
            server.process.stderr.close()
    acknowledged = through_doomed + through_survivor
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute("SELECT id, text FROM memory_nodes WHERE text LIKE 'kill note %'").fetchall()
    stored = {f"mem:{node}": text for node, text in rows}
    assert killed_after >= BEFORE_KILL and len(doomed_failed) == CLIENTS, doomed_failed  # each client was cut off
    assert set(doomed_failed) - {"ConnectError"}, doomed_failed  # and one had its write in hand when it died
    assert survivor_failed == [] and len(through_survivor) == CLIENTS * SURVIVOR_WRITES
    assert all(stored.get(node) == text for node, text in acknowledged)  # none lost, each under its id
    assert len({text for _, text in rows}) == len(rows)  # none twice
    assert len(rows) <= len(acknowledged) + CLIENTS  # at most the one write each cut-off client had in flight
    assert not found["isError"] and "kill note doomed" in str(found["structuredContent"])
