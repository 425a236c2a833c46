"""`loci bench sessions`: the memory of `loci serve --http` under clients that initialize and never close.

Each client sends one `initialize` and walks away, leaving its session open
on the server. Three servers (`loci serve --http --tools memory` on a free
loopback port, over one home) get `--abandoned` such clients (4,000) each,
one after another, and the bench reads the server's resident memory
(`VmRSS` of its process) before and after:

- `capped`: Loci's defaults (`--max-sessions 64`, `--session-idle 600`):
  past the cap a new session gets 503, so the server's memory stays flat;
- `uncapped`, the baseline (what the server did before the cap, and what
  the SDK allows by default: 10,000 sessions): `--max-sessions 100000`;
  its growth per session is what one abandoned session costs;
- `expiring`: no cap to speak of but `--session-idle` of `--idle` seconds
  (2): after that many seconds (plus one) every abandoned session is asked
  for a `ping`, and the bench counts the 404s (expired and removed) and
  reads the memory again.

Each server's count of admitted (200) and refused (503) sessions is
reported beside its memory, with the machine's CPU and load.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

from loci.bench.servers.mcp import http_server
from loci.memory.engines.sqlite.store import Store
from loci.runtime.cli.doctor import cpu_name
from loci.servers.transports.transport import MAX_SESSIONS, SESSION_IDLE_S

__all__ = ["add_arguments", "run"]

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO})
PING = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--abandoned", type=int, default=4_000, help="clients that initialize and never close")
    parser.add_argument("--idle", type=float, default=2.0, help="--session-idle of the expiring server, seconds")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    return await anyio.to_thread.run_sync(_measure, args.abandoned, args.idle)


def _measure(abandoned: int, idle: float) -> dict[str, Any]:
    result: dict[str, Any] = {"cpu": cpu_name(), "abandoned": abandoned, "max_sessions": MAX_SESSIONS}
    with tempfile.TemporaryDirectory(prefix="loci-bench-sessions-") as tmp:
        db = Path(tmp) / "loci.db"
        Store.open_sync(db).close()
        servers = {
            "capped": (),
            "uncapped": ("--max-sessions", "100000"),
            "expiring": ("--max-sessions", "100000", "--session-idle", str(idle)),
        }
        for name, flags in servers.items():
            result.update(_one(name, db, flags, abandoned, idle if name == "expiring" else None))
    result["uncapped_kb_per_session"] = round(
        (result["uncapped_rss_after_mb"] - result["uncapped_rss_before_mb"]) * 1024 / max(1, abandoned), 1
    )
    result["session_idle_default_s"] = SESSION_IDLE_S
    result["load_average_1m"] = round(os.getloadavg()[0], 2)
    return result


def _one(name: str, db: Path, flags: tuple[str, ...], abandoned: int, idle: float | None) -> dict[str, Any]:
    server = http_server(db, *flags)
    with server as (url, token), httpx.Client(headers={**HEADERS, "Authorization": f"Bearer {token}"}) as http:
        pid = server.process.pid
        http.post(url, content=INIT, timeout=30)  # warm: imports, the first session
        before = _rss_mb(pid)
        statuses: dict[int, int] = {}
        sessions = []
        for _ in range(abandoned):
            response = http.post(url, content=INIT, timeout=30)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            if sid := response.headers.get("mcp-session-id"):
                sessions.append(sid)
        out = {
            f"{name}_rss_before_mb": before,
            f"{name}_rss_after_mb": _rss_mb(pid),
            f"{name}_admitted": statuses.get(200, 0),
            f"{name}_refused_503": statuses.get(503, 0),
        }
        if idle is not None:
            time.sleep(idle + 1)  # a benchmark may wait: the sessions expire on the server's clock
            expired = sum(
                http.post(url, content=PING, headers={"mcp-session-id": sid}, timeout=30).status_code == 404
                for sid in sessions
            )
            out.update({f"{name}_expired_404": expired, f"{name}_rss_after_expiry_mb": _rss_mb(pid)})
    return out


def _rss_mb(pid: int) -> float:
    """The resident memory of process `pid` in MB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0
