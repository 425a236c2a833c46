"""A hosted server's failures are said, not swallowed: why a probe failed, and a broken change stream.

The client here is a stand-in for the connection (the network), so that each
failure happens exactly where the test puts it; the real transports are
exercised in `test_host.py`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from loci.runtime.host.config import ServerSpec
from loci.runtime.host.hosted import Hosted


class Probe:
    """A connection whose tool listing fails with `error`, or hangs when it is None."""

    def __init__(self, error: Exception | None) -> None:
        self.error = error

    async def list_tools(self, **_: Any) -> Any:
        if self.error is None:
            await anyio.sleep_forever()
        raise self.error


def running(name: str = "toy") -> Hosted:
    hosted = Hosted(ServerSpec(name, url="http://127.0.0.1:9/mcp"), call_timeout=5)
    hosted._set_status("running")
    return hosted


async def test_a_failed_probe_keeps_its_reason(caplog: pytest.LogCaptureFixture) -> None:
    hosted = running()
    with caplog.at_level(logging.INFO, logger="loci.host"):
        await hosted.check(Probe(ConnectionResetError("the pipe closed")))  # type: ignore[arg-type]
    assert hosted.status == "restarting"
    assert hosted.error == "its tool listing failed: ConnectionResetError: the pipe closed"
    assert "toy: its tool listing failed" in caplog.text


async def test_a_hung_probe_says_how_long_it_waited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("loci.runtime.host.hosted.PING_TIMEOUT_S", 0.05)
    hosted = running()
    with anyio.fail_after(10):
        await hosted.check(Probe(None))  # type: ignore[arg-type]
    assert hosted.error == "it did not answer a tool listing within 0.05s"


class Stream:
    """A connection whose tool-change stream is acknowledged, then breaks with `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    @asynccontextmanager
    async def listen(self, **_: Any) -> AsyncIterator[AsyncIterator[object]]:
        async def events() -> AsyncIterator[object]:
            raise self.error
            yield  # pragma: no cover - makes this an async generator

        yield events()


async def test_a_broken_change_stream_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    hosted = running()
    with caplog.at_level(logging.WARNING, logger="loci.host"), anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            await group.start(hosted._listen, Stream(RuntimeError("stream reset")))
    assert "toy: its tool-change stream broke: RuntimeError: stream reset" in caplog.text
