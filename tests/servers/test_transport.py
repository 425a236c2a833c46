"""A serving process's startup leaves what it built out of the garbage collector's walks."""

from __future__ import annotations

import gc
from typing import Any

import anyio

from loci.servers.transports.transport import FrozenAfterStartup


async def test_the_http_server_freezes_what_its_startup_built_then_passes_the_message_on() -> None:
    said: list[str] = []
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "lifespan.startup.complete"})
        said.append(f"frozen {gc.get_freeze_count() > 0}")
        await receive()
        await send({"type": "lifespan.shutdown.complete"})

    async def receive() -> Any:
        return next(messages)

    async def send(message: Any) -> None:
        said.append(message["type"])

    gc.unfreeze()
    try:
        with anyio.fail_after(10):
            await FrozenAfterStartup(app)({"type": "lifespan"}, receive, send)
    finally:
        gc.unfreeze()
    assert said == ["lifespan.startup.complete", "frozen True", "lifespan.shutdown.complete"]
