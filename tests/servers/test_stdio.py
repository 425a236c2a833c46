"""Serving one stdio connection: the answers, and what the startup built kept out of the garbage collector's walks."""

from __future__ import annotations

import gc
import json

import anyio

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph, NewNode
from loci.servers.app import build_app
from loci.servers.transports.stdio import serve_lines
from tests.servers.test_thin import CALLS, LinesOut


async def test_a_connection_is_served_with_the_startup_frozen(store: Store) -> None:
    await Graph(store).add_many([NewNode("The harbour lantern is green")], cause="test")
    frozen: list[int] = []

    async def lines() -> object:
        yield json.dumps(CALLS[0])
        frozen.append(gc.get_freeze_count())  # read once the lifespan has run: the first line is asked for after it

    out = LinesOut()
    gc.unfreeze()
    try:
        with anyio.fail_after(30):
            await serve_lines(build_app(store, ["memory"]), lines(), out)  # type: ignore[arg-type]
    finally:
        gc.unfreeze()
    assert frozen and frozen[0] > 0
    assert "lantern" in json.dumps(json.loads(out.text)["result"])
