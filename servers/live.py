"""Live memory: `subscriptions/listen` on `loci://memory/…` and a project's recent changes, across servers.

A client of the 2026-07-28 protocol opens a `subscriptions/listen` stream
naming the resources it follows (`loci://memory/mem:12`, or
`CHANGES_URI`, the project's recent changes) and hears
`notifications/resources/updated` for each when it changes, and
`notifications/resources/list_changed` when it asked for that. The stream
itself is the SDK's (`mcp.server.subscriptions.ListenHandler`: the ack, the
subscription id on every frame, the filter); what this module gives it is
the bus, `LiveMemory`, that learns of changes made anywhere.

A change made through another server, another process on the same SQLite
file or another host on the same PostgreSQL database, never passes through
this process, so the bus reads the home's own record of changes: every
write to the graph adds rows to `memory_events` in its transaction. While at
least one stream is open, `watch` reads the events past the last one it saw,
of this server's project only (an event of another project's memory, or of
a link between them, is never read). When it reads is the engine's: on
SQLite every `POLL_S`; on PostgreSQL when told, as each transaction that
adds events notifies `MEMORY_CHANNEL` with its project on commit
(its trigger in memory/engines/postgres/schema/graph.py), and `watch` listens for its own
project's (the home's `listen`, memory/engines/postgres/listen.py, the job queue's
listener: a lost connection is opened again and read after at once). The
listening connection is opened when the first stream comes (before the
first read, so no change slips between the two) and closed within
`NOTIFY_WAIT_S` of the last one leaving; with no stream open it reads
nothing. An event is published once, as the memory it touched (both
ends of a link) and the recent changes. A stream opened at time t hears of
the changes committed after t (and may hear of those of the `CLOCK_SLACK_S`
before it: an event says "read again", so one too many costs a read, while
one missed, because another host's clock is behind, would cost the change);
there is no replay before, as the SDK's listen streams have none.

Reading `CHANGES_URI` gives the project's last `RECENT` changes, newest
first, as JSON.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Final

import anyio
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
)
from mcp.types import Resource

from loci.memory.engines.base import MEMORY_CHANNEL, Engine
from loci.memory.errors import StoreError

__all__ = ["CHANGES_URI", "NOTIFY_WAIT_S", "POLL_S", "RECENT", "LiveMemory", "changes_resource", "read_changes"]

log = logging.getLogger("loci.server")

CHANGES_URI: Final = "loci://memory/changes"
POLL_S: Final = 0.05
NOTIFY_WAIT_S: Final = 1.0  # PostgreSQL: how long one wait for a notification lasts before it looks who listens
CLOCK_SLACK_S: Final = 2.0
RECENT: Final = 50
_BATCH = 500

# The events of one project past a cursor: a node's own, or a link's (read as both its ends).
_SINCE = (
    "SELECT e.id, e.at, e.op, e.cause, COALESCE(e.node, l.src), l.dst FROM memory_events e"
    " LEFT JOIN memory_edges l ON l.id = e.edge"
    " JOIN memory_nodes n ON n.id = COALESCE(e.node, l.src)"
    " WHERE e.id > ? AND n.project = ? ORDER BY e.id LIMIT ?"
)
_NEWEST = "SELECT max(id) FROM memory_events"
_BEFORE = _NEWEST + " WHERE at < ?"
_RECENT = (
    "SELECT e.id, e.at, e.op, e.cause, COALESCE(e.node, l.src), l.dst FROM memory_events e"
    " LEFT JOIN memory_edges l ON l.id = e.edge"
    " JOIN memory_nodes n ON n.id = COALESCE(e.node, l.src)"
    " WHERE n.project = ? ORDER BY e.id DESC LIMIT ?"
)


class LiveMemory:
    """The SDK's `SubscriptionBus`, fed by the home's change record for one project while anyone listens."""

    def __init__(self, poll_s: float = POLL_S) -> None:
        self.poll_s = poll_s
        self._fanout = InMemorySubscriptionBus()
        self._listening = 0
        self._since = 0.0
        self._wanted = anyio.Event()

    async def publish(self, event: ServerEvent) -> None:
        await self._fanout.publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        """Register a stream's listener; the first wakes `watch`, which reads from the time it came."""
        unsubscribe = self._fanout.subscribe(listener)
        if self._listening == 0:
            self._since = time.time() - CLOCK_SLACK_S
        self._listening += 1
        self._wanted.set()
        left = False

        def leave() -> None:
            nonlocal left
            if not left:
                left = True
                self._listening -= 1
                unsubscribe()

        return leave

    async def watch(self, store: Engine, project: str) -> None:
        """Publish the changes of `project` in `store` while a stream is open; runs until cancelled."""
        cursor = await self._last_event(store)
        while True:
            if self._listening == 0:
                self._wanted = anyio.Event()
                await self._wanted.wait()
            # from the last event before the first stream came: a write made as it came, before the read above
            # ended, is still published (events are published from the time it came)
            cursor = min(cursor, await self._last_event(store, before=self._since))
            async with self._told(store, project) as changed:
                while self._listening:
                    try:
                        rows = await store.read(partial(_since, after=cursor, project=project))
                    except StoreError as exc:  # a home busy or briefly gone: the streams wait, the server goes on
                        log.warning("live memory: %s; reading again in %s s", exc, self.poll_s)
                        await anyio.sleep(self.poll_s)
                        continue
                    if rows:
                        cursor = rows[-1][0]
                        await self._published([row for row in rows if row[1] >= self._since])
                    if len(rows) < _BATCH:
                        await changed()

    async def _last_event(self, store: Engine, before: float | None = None) -> int:
        """The newest event's id (of those before the time `before`, when given), once the home answers: a server
        started while its database is away waits for it here (the streams see nothing meanwhile) rather than
        ending."""
        sql, args = (_NEWEST, []) if before is None else (_BEFORE, [before])
        while True:
            try:
                found = await store.read(lambda db: db.conn.execute(sql, args).fetchone()[0])
                return found or 0
            except StoreError as exc:
                log.warning("live memory: %s; reading again in %s s", exc, self.poll_s)
                await anyio.sleep(self.poll_s)

    @asynccontextmanager
    async def _told(self, store: Engine, project: str) -> AsyncIterator[Callable[[], Awaitable[None]]]:
        """How to wait for the next change: `project`'s notification where the engine listens (PostgreSQL),
        listening from here to the block's end; else the poll (SQLite)."""
        try:
            listener = await store.listen(MEMORY_CHANNEL, payload=project)
        except StoreError as exc:  # the home is away: poll until the next stream opens
            log.warning("live memory: cannot listen (%s); reading every %s s", exc, self.poll_s)
            listener = None
        if listener is None:
            yield partial(anyio.sleep, self.poll_s)
            return

        async def notified() -> None:
            try:
                while self._listening and not await listener.wait(NOTIFY_WAIT_S):
                    pass
            except StoreError as exc:  # its next wait listens again on a new connection, and returns at once
                log.warning("live memory: %s; listening again in %s s", exc, NOTIFY_WAIT_S)
                await anyio.sleep(NOTIFY_WAIT_S)

        try:
            yield notified
        finally:
            with anyio.CancelScope(shield=True):
                await listener.aclose()

    async def _published(self, rows: list[Any]) -> None:
        touched = dict.fromkeys(node for row in rows for node in row[4:] if node is not None)
        if not touched:
            return
        for node in touched:
            await self.publish(ResourceUpdated(uri=f"loci://memory/mem:{node}"))
        await self.publish(ResourceUpdated(uri=CHANGES_URI))
        await self.publish(ResourcesListChanged())


def _since(db: Any, *, after: int, project: str) -> list[Any]:
    return db.conn.execute(_SINCE, [after, project, _BATCH]).fetchall()


def changes_resource() -> Resource:
    return Resource(
        uri=CHANGES_URI,
        name="changes",
        description=f"The project's last {RECENT} memory changes, newest first; listen to hear of new ones.",
        mime_type="application/json",
    )


async def read_changes(store: Engine, project: str) -> str:
    """The project's last `RECENT` changes as JSON: the event, when, what, why and the memories it touched."""
    rows = await store.read(lambda db: db.conn.execute(_RECENT, [project, RECENT]).fetchall())
    changes = [
        {
            "event": event,
            "at": at,
            "op": op,
            "cause": cause,
            "ids": [f"mem:{node}" for node in (a, b) if node is not None],
        }
        for event, at, op, cause, a, b in rows
    ]
    return json.dumps(changes, ensure_ascii=False, indent=2)
