"""Live memory (servers/live.py): a client listening on one server hears of writes made through another.

The listening server is `loci serve` in a process of its own (over HTTP, on
SQLite and on PostgreSQL, and over stdio); the writes are made through a
second server in this process, on the same home. The listener hears of the
memory it follows and of the project's recent changes, never of another
project's memories, and reading the changes shows what happened. On
PostgreSQL the listening server is told of a change (NOTIFY), so it hears
it with its poll set to an hour.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.server.subscriptions import ResourceUpdated, ServerEvent

from loci.bench.servers.postgres_cluster import running_cluster
from loci.memory.engines.select import use_engine
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import StoreUnavailable
from loci.memory.graph.graph import Graph
from loci.servers.app import build_app
from loci.servers.live import CHANGES_URI, LiveMemory
from tests.runtime.cli.test_serve_http import start, stop


async def test_a_listener_on_one_server_hears_a_write_made_through_another(tmp_path: Path, home: str) -> None:
    async with use_engine(home) as store:
        followed, _ = await Graph(store).remember("the harbour lantern is green")
        served = start(tmp_path, db=home)  # type: ignore[arg-type]  # a PostgreSQL URL is as good as a path here
        try:
            async with (
                Client(streamable_http_client(served.url)) as listener,
                Client(build_app(store, ["memory"])) as writer,
            ):
                async with listener.listen(resource_subscriptions=[f"loci://memory/{followed.ref}"]) as stream:
                    await writer.call_tool("memory_update", {"id": followed.ref, "text": "the lantern is red"})
                    with anyio.fail_after(10):
                        heard = await anext(stream)
                changes = json.loads((await listener.read_resource(CHANGES_URI)).contents[0].text)
        finally:
            stop(served.process)
            served.process.stderr.close()
    assert heard == ResourceUpdated(uri=f"loci://memory/{followed.ref}")
    assert changes[0]["op"] == "update" and changes[0]["ids"] == [followed.ref]
    assert changes[0]["cause"] == "tool:memory_update"


async def test_over_stdio_a_listener_hears_its_project_only(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    served = StdioServerParameters(
        command=sys.executable, args=["-m", "loci.runtime.cli.main", "serve", "--db", str(db), "--project", "a"]
    )
    async with await Store.open(db) as store:
        with anyio.fail_after(120):
            async with (
                Client(served) as listener,
                Client(build_app(store, ["memory"], project="b")) as other,
                Client(build_app(store, ["memory"], project="a")) as same,
            ):
                # A new home: b's memory will be mem:1 and a's mem:2; the listener follows both ids.
                followed = [CHANGES_URI, "loci://memory/mem:1", "loci://memory/mem:2"]
                async with listener.listen(resource_subscriptions=followed) as stream:
                    theirs = (
                        await other.call_tool("memory_remember", {"text": "project b's secret"})
                    ).structured_content
                    mine = (await same.call_tool("memory_remember", {"text": "project a's note"})).structured_content
                    heard = []
                    with anyio.fail_after(10):
                        while ResourceUpdated(uri="loci://memory/mem:2") not in heard:
                            heard.append(await anext(stream))
                changes = json.loads((await listener.read_resource(CHANGES_URI)).contents[0].text)
    assert (theirs["id"], mine["id"]) == ("mem:1", "mem:2")
    assert ResourceUpdated(uri="loci://memory/mem:1") not in heard  # b's write came first, and was not heard
    assert [change["ids"] for change in changes] == [["mem:2"]]


async def test_on_postgresql_a_change_is_heard_when_notified_not_when_polled(postgres_url: str) -> None:
    live = LiveMemory(poll_s=3600)  # were it polling, a change would wait an hour to be heard
    sent, received = anyio.create_memory_object_stream[ServerEvent](100)
    heard: list[ServerEvent] = []

    async def next_change() -> None:
        while (event := await received.receive()) != ResourceUpdated(uri=CHANGES_URI):
            if isinstance(event, ResourceUpdated):  # a memory it touched (the list changed too: not kept here)
                heard.append(event)

    async with sent, received, use_engine(postgres_url) as watched, use_engine(postgres_url) as writing:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(live.watch, watched, "default")
                leave = live.subscribe(sent.send_nowait)
                first, _ = await Graph(writing).remember("the harbour lantern is green")
                await next_change()  # heard by the first read or told: the watch now waits
                theirs, _ = await Graph(writing, project="other").remember("another project's note")
                second, _ = await Graph(writing).remember("the ferry leaves at nine")
                await next_change()
                leave()
                group.cancel_scope.cancel()
    assert heard == [ResourceUpdated(uri=f"loci://memory/{ref}") for ref in (first.ref, second.ref)]
    assert theirs.ref not in {first.ref, second.ref}


async def test_a_server_started_while_its_database_is_away_waits_for_it_and_then_hears_writes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with running_cluster() as cluster:
        async with use_engine(cluster.url) as store:
            await Graph(store).remember("the harbour lantern is green")
            live = LiveMemory(poll_s=0.05)
            heard: list[ServerEvent] = []
            live.subscribe(heard.append)
            cluster.pg_ctl("stop", "-m", "fast")
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(live.watch, store, "default")
                with anyio.fail_after(30):  # the watcher says the home is away, and goes on
                    while "live memory:" not in caplog.text:
                        await anyio.sleep(0.05)
                cluster.pg_ctl("start")
                with anyio.fail_after(60):
                    while not heard:
                        with contextlib.suppress(StoreUnavailable):  # the pool reconnects after the restart
                            await Graph(store).remember("the harbour lantern is red")
                        await anyio.sleep(0.2)
                tasks.cancel_scope.cancel()
    assert any(isinstance(event, ResourceUpdated) for event in heard)


async def test_a_write_made_as_the_first_stream_opens_is_heard_though_the_watch_starts_after_it(
    tmp_path: Path,
) -> None:
    async with await Store.open(tmp_path / "loci.db") as store:
        live = LiveMemory(poll_s=0.05)
        heard: list[ServerEvent] = []
        live.subscribe(heard.append)  # the stream opens, then the write commits before the watch first reads
        written, _ = await Graph(store).remember("the harbour lantern is green")
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(live.watch, store, "default")
                while ResourceUpdated(uri=f"loci://memory/{written.ref}") not in heard:
                    await anyio.sleep(0.05)
                tasks.cancel_scope.cancel()
