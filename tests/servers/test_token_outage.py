"""A home token checked while the home's PostgreSQL is down: a 503 with a JSON-RPC error, at once, never a 500."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio

from loci.bench.servers.postgres_cluster import running_cluster
from loci.memory.engines.postgres.store import DOWN_WAIT_S, WAIT_S, PgStore
from loci.memory.records.tokens import Principal, Tokens
from loci.servers.auth.principals import Principals
from loci.servers.auth.scoped import ProjectApps
from loci.servers.errors import RETRY_AFTER_S, STORE_UNAVAILABLE
from tests.conftest import new_database


async def _ask(app: ProjectApps, token: str) -> tuple[int, dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "path": "/mcp", "headers": [(b"authorization", f"Bearer {token}".encode())]}
    await app(scope, receive, send)
    return sent[0]["status"], json.loads(sent[1]["body"])


async def test_a_token_checked_while_postgresql_is_down_gets_a_json_rpc_error_quickly() -> None:
    with running_cluster() as cluster:
        async with await PgStore.open(new_database(cluster.url)) as store:
            token = await Tokens(store).add("alice", ["app"])
            principals = Principals(store, Principal("owner", ("app",)), token=None, open_without_token=False)
            app = ProjectApps(principals, lambda project, read_only: None)  # type: ignore[arg-type,return-value]
            cluster.pg_ctl("stop", "-m", "fast")
            answers = []
            with anyio.fail_after(3 * WAIT_S):
                for _ in range(2):
                    began = time.monotonic()
                    answers.append((*await _ask(app, token), time.monotonic() - began))
            cluster.pg_ctl("start")
    (status, body, first), (_, _, second) = answers
    assert status == 503 and body["jsonrpc"] == "2.0" and body["error"]["code"] == STORE_UNAVAILABLE
    assert body["error"]["data"] == {"retryAfter": RETRY_AFTER_S}
    assert "the database is unavailable" in body["error"]["message"]
    # Within the store's wait (the pool's own was 30 s), and faster once it is known to be down.
    assert first <= WAIT_S + 3 and second <= DOWN_WAIT_S + 2
