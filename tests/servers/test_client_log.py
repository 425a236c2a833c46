"""A log line that cannot reach the client never fails the call: a closed client's quietly, others logged."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from loci.servers.client_log import ClientLog


class Ctx:
    """The tool call's context, whose `log` fails with `error` (or records the line)."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error, self.sent = error, []

    async def log(self, level: str, message: str, **_: Any) -> None:
        if self.error is not None:
            raise self.error
        self.sent.append((level, message))


async def test_a_line_at_the_clients_level_is_sent_and_one_below_it_is_not() -> None:
    ctx, log = Ctx(), ClientLog("info")
    await log.send(ctx, "info", "turn 1")  # type: ignore[arg-type]
    await log.send(ctx, "debug", "detail")  # type: ignore[arg-type]
    assert ctx.sent == [("info", "turn 1")]


async def test_a_closed_client_drops_the_line_without_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="loci.server"):
        await ClientLog().send(Ctx(anyio.ClosedResourceError()), "info", "turn 1")  # type: ignore[arg-type]
    assert caplog.records == []


async def test_any_other_failure_is_logged_and_the_call_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="loci.server"):
        await ClientLog().send(Ctx(ValueError("bad params")), "info", "turn 1")  # type: ignore[arg-type]
    assert "could not send a log line to the client (ValueError: bad params): turn 1" in caplog.text
