"""What held a `loci bench team` run back: the CPU each part used, and what the database's connections did.

`Usage.take(pids, db)` reads, from /proc, the CPU seconds so far of each
server process, of the PostgreSQL backends serving the run's database, of
this process (the clients), and of the whole machine (`/proc/stat`); the
difference of two readings divided by the run's seconds is each part's
`cores_busy`, and what the machine was busy with beyond them is other work
(a shared machine's). `sample_waits` looks at `pg_stat_activity` every
`SAMPLE_S` until cancelled and counts what each connection was doing:
running a statement, waiting on a lock, holding a transaction open while its
server computes the next statement, or idle in the pool.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from loci.memory.location import is_postgres

__all__ = ["SAMPLE_S", "Usage", "sample_waits", "shares"]

SAMPLE_S = 0.1  # how often the database's connections are looked at
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Usage:
    """CPU seconds so far: each server's, the database's backends' (PostgreSQL only), this process's, the
    machine's (every core's busy time)."""

    servers: tuple[float, ...]
    database: float
    clients: float
    machine: float

    @classmethod
    def take(cls, pids: list[int], db: str) -> Usage:
        return cls(tuple(_cpu_s([pid]) for pid in pids), _backends_cpu_s(db), time.process_time(), _machine_s())

    def busy(self, before: Usage, elapsed: float) -> dict[str, float]:
        """Cores kept busy per second since `before`: the servers, the database, the clients, other work."""
        parts = {
            "servers": sum(self.servers) - sum(before.servers),
            "database": self.database - before.database,
            "clients": self.clients - before.clients,
        }
        parts["other_work"] = max(0.0, self.machine - before.machine - sum(parts.values()))
        return {name: round(seconds / elapsed, 2) for name, seconds in parts.items()}

    def each_server(self, before: Usage, elapsed: float) -> list[float]:
        return [round((now - then) / elapsed, 3) for now, then in zip(self.servers, before.servers, strict=True)]


def _cpu_s(pids: list[int]) -> float:
    """The CPU seconds (user and system) the processes `pids` have used so far."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / _TICK


def _machine_s() -> float:
    """The CPU seconds every core of the machine has been busy so far (all but idle and I/O wait)."""
    try:
        fields = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return 0.0
    return (sum(fields) - fields[3] - fields[4]) / _TICK


def _database_name(db: str) -> str:
    return db.rsplit("/", 1)[1].split("?", 1)[0]


def _backends_cpu_s(db: str) -> float:
    """The CPU seconds the PostgreSQL backends of `db`'s database on this machine have used so far (0 for SQLite)."""
    if not is_postgres(db):
        return 0.0
    name = _database_name(db)
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if command.startswith(b"postgres: ") and f" {name} ".encode() in command:
                pids.append(int(entry.name))
    return _cpu_s(pids)


async def sample_waits(db: str, waits: Counter[str]) -> None:
    """Until cancelled, every `SAMPLE_S`: what each connection to `db`'s database is doing (PostgreSQL only)."""
    if not is_postgres(db):
        return
    import psycopg

    sql = (
        "SELECT state, wait_event_type, wait_event FROM pg_stat_activity"
        " WHERE datname = %s AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
    )
    conn = await anyio.to_thread.run_sync(lambda: psycopg.connect(db, autocommit=True))
    try:
        while True:
            rows = await anyio.to_thread.run_sync(lambda: conn.execute(sql, [_database_name(db)]).fetchall())
            waits.update(_doing(*row) for row in rows)
            await anyio.sleep(SAMPLE_S)
    finally:
        conn.close()


def _doing(state: str | None, kind: str | None, event: str | None) -> str:
    """What a connection is doing, in the words of the report."""
    if state == "active":
        return "running" if kind is None else f"waiting on a lock ({event})" if kind == "Lock" else f"waiting on {kind}"
    if state == "idle in transaction":
        return "in a transaction, waiting for its server"
    return "idle in the pool"


def shares(waits: Counter[str]) -> dict[str, float]:
    total = sum(waits.values()) or 1
    return {doing: round(n / total, 2) for doing, n in waits.most_common()}
