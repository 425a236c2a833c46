"""Codex reaching `loci serve --http` with a token, as docs/mcp.md says: the printed table, `LOCI_TOKEN`, a call.

Without the token, the server's 401 says why in its `WWW-Authenticate`
header, which Codex shows the user.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.clients.harness import Machine
from tests.runtime.cli.test_serve_http import Served, start, stop

pytestmark = [pytest.mark.clients, pytest.mark.slow]

TOKEN = "a-token-of-the-servers-own-43-characters-xyz"


@pytest.fixture
def served(machine: Machine, tmp_path: Path) -> Iterator[Served]:
    machine.loci("memory", "add", "The staging server of harbor listens on port 7070.")
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n", encoding="utf-8")
    server = start(tmp_path, "--token-file", str(token), db=machine.db)
    try:
        yield server
    finally:
        stop(server.process)
        assert server.process.stderr is not None
        server.process.stderr.close()


def test_codex_calls_the_http_server_with_the_token_from_its_environment(machine: Machine, served: Served) -> None:
    port = served.url.rsplit(":", 1)[1].split("/")[0]
    table = machine.loci("serve", "--print-config", "--client", "codex", "--http", "--port", port).stdout
    assert 'bearer_token_env_var = "LOCI_TOKEN"' in table and TOKEN not in table
    config = machine.codex_home / "config.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n" + table + "\n", encoding="utf-8")
    machine.stub.call, machine.stub.arguments = "memory_recall", {"query": "staging port"}

    refused = machine.codex("Which port does staging use?", LOCI_TOKEN="not-the-token")
    assert "function_call_output" not in machine.sent()
    assert "needs a bearer token" in refused.stderr or "wrong or revoked" in refused.stderr, refused.stderr[-3000:]

    machine.stub.requests.clear()
    machine.codex("Which port does staging use?", LOCI_TOKEN=TOKEN)
    sent = machine.sent()
    assert "function_call_output" in sent and "port 7070.</stored-notes>" in sent.replace('\\"', '"')
