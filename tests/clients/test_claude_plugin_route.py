"""Claude Code with Loci's plugin (`claude --plugin-dir plugin`), as a user gets it from the marketplace.

With `loci` findable (here `LOCI_BIN`, as the user sets it in Claude Code's
settings) the plugin's hooks put the framed notes before the model and its
MCP server connects. Without it, the hook tells the user what is missing in
Claude Code's own output (`systemMessage`), writes the same line where
`loci doctor` reads it, and the MCP server answers as a stand-in that says
the same (a server that failed to start would be remembered as needing
sign-in and skipped later), so the next session, with `loci` found,
connects the real one.
"""

from __future__ import annotations

import pytest

from tests.clients.harness import CLIENT_BIN, ROOT, Machine

pytestmark = [pytest.mark.clients, pytest.mark.slow]

PLUGIN = ["--plugin-dir", str(ROOT / "plugin")]
FACT = "The staging server of harbor listens on port 7070."


def _server(events: list[dict]) -> dict:
    [init] = [e for e in events if e.get("type") == "system" and e.get("subtype") == "init"]
    [server] = [s for s in init["mcp_servers"] if s["name"] == "plugin:loci:loci"]
    return server


def test_without_loci_the_plugin_says_what_is_missing_and_works_once_loci_is_found(machine: Machine) -> None:
    machine.loci("memory", "add", FACT)
    nowhere = f"{CLIENT_BIN}:/usr/local/bin:/usr/bin:/bin"  # no `loci` on this PATH
    events = machine.claude_events("Which port does staging use?", *PLUGIN, PATH=nowhere)
    said = [e.get("output", "") for e in events if e.get("subtype") == "hook_response"]
    assert any("cannot find the loci command" in out and "LOCI_BIN" in out for out in said)
    assert _server(events)["status"] == "connected"
    sent = machine.sent()
    assert "port 7070" not in sent and "mcp__plugin_loci_loci__loci_status" in sent
    assert "cannot find the loci command" in sent  # the stand-in's tool says what is missing
    doctor = machine.loci("doctor", "--db", str(machine.db)).stdout
    assert "hook recall: last" in doctor and "cannot find the loci command" in doctor

    machine.stub.requests.clear()
    events = machine.claude_events(
        "Which port does staging use?", *PLUGIN, PATH=nowhere, LOCI_BIN=str(machine.loci_bin)
    )
    assert _server(events)["status"] == "connected"
    sent = machine.sent()
    assert max(machine.times_in_each_request("port 7070")) == 1 and '<stored-notes source=\\"loci\\">' in sent
    assert "mcp__plugin_loci_loci__memory_recall" in sent  # the real server's tools, offered to the model
    assert "loci_status" not in sent
