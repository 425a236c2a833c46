"""Waiting on PostgreSQL for a notification: `LISTEN` on a connection of its own.

A worker that would otherwise poll the job queue waits here instead. The
listener holds one autocommit connection, apart from the store's pool (a
pooled connection goes back to the pool between transactions, and a
`LISTEN` would go with it), and listens on one channel. A notification sent
(`pg_notify`, the dialect's `notify`) in a transaction reaches it when that
transaction commits. One that arrives while no one waits stays in the
connection's buffer and ends the next `wait` at once, so a job queued
between a worker's empty claim and its wait is not missed. `wait` is bounded
by its timeout: the caller polls then anyway, for what no notification
announces (a job whose lease ran out). A connection that is lost raises the
store's one-line `StoreUnavailable` (a restart, a terminated backend), and
the next `wait` connects and listens again (what was announced meanwhile is
lost: that `wait` returns True at once, so its caller looks at the queue).

A listener opened with a `payload` wakes only for the notifications that
carry it (live memory listens on `MEMORY_CHANNEL` for its own project's
changes, servers/live.py); the others it reads and lets pass.
"""

from __future__ import annotations

import contextlib
import re

import psycopg

from loci.memory.engines.postgres.connection import CONNECT_TIMEOUT_S
from loci.memory.engines.postgres.health import translate
from loci.memory.errors import StoreError
from loci.memory.location import shown

__all__ = ["PgListener"]

_CHANNEL = re.compile(r"^[a-z_][a-z0-9_]*$")


class PgListener:
    """A connection listening on one channel. Use `await PgListener.open(url, channel)`; close with `aclose()`."""

    def __init__(
        self, raw: psycopg.AsyncConnection, url: str, channel: str, timeout: float, payload: str | None = None
    ) -> None:
        self._raw: psycopg.AsyncConnection | None = raw
        self._url = url
        self._timeout = timeout
        self.location = shown(url)
        self.channel = channel
        self.payload = payload

    @classmethod
    async def open(
        cls, url: str, channel: str, *, timeout: float = CONNECT_TIMEOUT_S, payload: str | None = None
    ) -> PgListener:
        """Listen on `channel` (for the notifications carrying `payload` only, when given)."""
        if not _CHANNEL.match(channel):
            raise ValueError(f"{channel!r} is not a channel name")
        return cls(await _listening(url, channel, timeout), url, channel, timeout, payload)

    async def wait(self, timeout: float) -> bool:
        """Wait until a notification arrives on the channel (True) or `timeout` seconds pass (False). After a
        lost connection, the first wait listens again and returns True at once."""
        if self._raw is None or self._raw.closed:
            self._raw = None
            self._raw = await _listening(self._url, self.channel, min(self._timeout, max(1.0, timeout)))
            return True
        try:
            # Closed here, not when collected: until it is, the generator holds the connection's lock, and the
            # next wait would queue behind it.
            stop_after = 1 if self.payload is None else None
            async with contextlib.aclosing(self._raw.notifies(timeout=timeout, stop_after=stop_after)) as notified:
                async for notice in notified:
                    if self.payload is None or notice.payload == self.payload:
                        return True
        except psycopg.Error as exc:
            await self._raw.close()
            self._raw = None
            raise translate(exc, self.location, "listen on") or StoreError(f"lost {self.location}") from exc
        return False

    async def aclose(self) -> None:
        if self._raw is not None:
            await self._raw.close()


async def _listening(url: str, channel: str, timeout: float) -> psycopg.AsyncConnection:
    """A new autocommit connection listening on `channel`."""
    try:
        raw = await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=max(1, int(timeout)))
        await raw.execute(f"LISTEN {channel}")
    except psycopg.Error as exc:
        raise translate(exc, shown(url), "listen on") or StoreError(f"cannot listen on {shown(url)}") from exc
    return raw
