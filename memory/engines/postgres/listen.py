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
store's one-line `StoreError`.
"""

from __future__ import annotations

import re

import psycopg

from memory.engines.postgres.store import CONNECT_TIMEOUT_S, translate
from memory.errors import StoreError
from memory.location import shown

__all__ = ["PgListener"]

_CHANNEL = re.compile(r"^[a-z_][a-z0-9_]*$")


class PgListener:
    """A connection listening on one channel. Use `await PgListener.open(url, channel)`; close with `aclose()`."""

    def __init__(self, raw: psycopg.AsyncConnection, url: str, channel: str) -> None:
        self._raw = raw
        self.location = shown(url)
        self.channel = channel

    @classmethod
    async def open(cls, url: str, channel: str, *, timeout: float = CONNECT_TIMEOUT_S) -> PgListener:
        if not _CHANNEL.match(channel):
            raise ValueError(f"{channel!r} is not a channel name")
        try:
            raw = await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=max(1, int(timeout)))
            await raw.execute(f"LISTEN {channel}")
        except psycopg.Error as exc:
            raise translate(exc, shown(url), "listen on") or StoreError(f"cannot listen on {shown(url)}") from exc
        return cls(raw, url, channel)

    async def wait(self, timeout: float) -> bool:
        """Wait until a notification arrives on the channel (True) or `timeout` seconds pass (False)."""
        try:
            async for _ in self._raw.notifies(timeout=timeout, stop_after=1):
                return True
        except psycopg.Error as exc:
            raise translate(exc, self.location, "listen on") or StoreError(f"lost {self.location}") from exc
        return False

    async def aclose(self) -> None:
        await self._raw.close()
