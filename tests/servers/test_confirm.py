"""Confirmations before `memory_forget` and `memory_restore` over MCP (servers/confirm.py), on real transports.

A client that can answer is asked, with the memory's text, and what it
answers decides: confirmed, the memory is forgotten; declined, nothing
changes. A client that cannot answer is refused with a line saying how to go
ahead (`confirm: true`), which then goes ahead without asking. Over the
2026-07-28 protocol the question is an `InputRequiredResult` the client
answers by calling again (in process, stdio, and the raw HTTP wire); over the
handshake protocol it is an `elicitation/create` request in the call.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client, StdioServerParameters
from mcp.types import ElicitRequestParams, ElicitResult

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph
from loci.servers.app import build_app
from tests.runtime.cli.test_serve_http import start, stop

TEXT = "the harbour lantern is green"


class Answers:
    """An elicitation callback that answers from a script and keeps the questions it was asked."""

    def __init__(self, *actions: str) -> None:
        self.actions = list(actions)
        self.asked: list[str] = []

    async def __call__(self, _ctx: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params.message)
        action = self.actions.pop(0)
        return ElicitResult(action=action, content={"confirm": True} if action == "accept" else None)


async def _remembered(store: Store, text: str = TEXT) -> str:
    node, _ = await Graph(store).remember(text)
    return node.ref


async def _forgotten(store: Store, ref: str) -> bool:
    sql = "SELECT deleted IS NOT NULL FROM memory_nodes WHERE id = ?"
    rows = await store.read(lambda db: db.conn.execute(sql, [int(ref.removeprefix("mem:"))]).fetchall())
    return bool(rows[0][0])


async def test_a_client_that_confirms_is_asked_with_the_text_and_the_memory_is_forgotten(store: Store) -> None:
    ref = await _remembered(store)
    answers = Answers("accept", "accept")
    async with Client(build_app(store, ["memory"]), elicitation_callback=answers) as client:
        forgot = await client.call_tool("memory_forget", {"id": ref, "reason": "stale"})
        was_forgotten = await _forgotten(store, ref)
        restored = await client.call_tool("memory_restore", {"id": ref})
        version = client.protocol_version
    assert version == "2026-07-28"
    assert forgot.structured_content == {"id": ref, "forgotten": True} and was_forgotten
    assert restored.structured_content["restored"] is True and not await _forgotten(store, ref)
    assert answers.asked == [f'Loci: forget {ref}, "{TEXT}"?', f'Loci: bring back {ref}, "{TEXT}"?']


async def test_a_client_that_declines_changes_nothing(store: Store) -> None:
    ref = await _remembered(store)
    answers = Answers("decline", "cancel")
    async with Client(build_app(store, ["memory"]), elicitation_callback=answers) as client:
        declined = await client.call_tool("memory_forget", {"id": ref})
        cancelled = await client.call_tool("memory_forget", {"id": ref})
    assert not declined.is_error and declined.structured_content["changed"] is False
    assert "did not confirm" in declined.content[0].text and TEXT in declined.content[0].text
    assert cancelled.structured_content["changed"] is False
    assert not await _forgotten(store, ref) and len(answers.asked) == 2


async def test_a_client_that_cannot_answer_is_refused_unless_it_says_confirm(store: Store) -> None:
    ref = await _remembered(store)
    async with Client(build_app(store, ["memory"])) as client:
        refused = await client.call_tool("memory_forget", {"id": ref})
        still_there = not await _forgotten(store, ref)
        confirmed = await client.call_tool("memory_forget", {"id": ref, "confirm": True})
        missing = await client.call_tool("memory_forget", {"id": "mem:999"})
    assert refused.is_error and still_there
    assert refused.content[0].text == (
        f'memory_forget would forget {ref}, "{TEXT}". This client cannot be asked to confirm it: '
        "call again with confirm: true."
    )
    assert confirmed.structured_content == {"id": ref, "forgotten": True} and await _forgotten(store, ref)
    assert missing.is_error and "mem:999" in missing.content[0].text  # nothing to ask about: the tool's own error


async def test_a_handshake_client_is_asked_in_the_middle_of_the_call(store: Store) -> None:
    ref = await _remembered(store)
    answers = Answers("decline", "accept")
    async with Client(build_app(store, ["memory"]), mode="legacy", elicitation_callback=answers) as client:
        declined = await client.call_tool("memory_forget", {"id": ref})
        kept = not await _forgotten(store, ref)
        confirmed = await client.call_tool("memory_forget", {"id": ref})
        version = client.protocol_version
    assert version != "2026-07-28"
    assert declined.structured_content["changed"] is False and kept
    assert confirmed.structured_content == {"id": ref, "forgotten": True} and len(answers.asked) == 2


async def test_over_stdio_the_served_client_is_asked_and_its_answer_decides(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    async with await Store.open(db) as store:
        ref = await _remembered(store)
    served = StdioServerParameters(
        command=sys.executable, args=["-m", "loci.runtime.cli.main", "serve", "--db", str(db), "--tools", "memory"]
    )
    answers = Answers("decline", "accept")
    with anyio.fail_after(120):
        async with Client(served, elicitation_callback=answers) as client:
            declined = await client.call_tool("memory_forget", {"id": ref})
            confirmed = await client.call_tool("memory_forget", {"id": ref})
    assert declined.structured_content["changed"] is False
    assert confirmed.structured_content == {"id": ref, "forgotten": True}
    assert answers.asked == [f'Loci: forget {ref}, "{TEXT}"?'] * 2


def _post(url: str, ident: int, params: dict[str, Any], capabilities: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC answer to a `tools/call` sent as a 2026-07-28 client sends it: the envelope in `params._meta`,
    the method and the tool's name in the `Mcp-Method` and `Mcp-Name` headers."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    body = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": {**params, "_meta": meta}}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": params["name"],
    }
    return json.loads(httpx.post(url, json=body, headers=headers, timeout=60).text)


async def test_over_http_the_question_and_its_answer_travel_in_the_call_itself(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    async with await Store.open(db) as store:
        ref = await _remembered(store)
    served = start(tmp_path, db=db)
    can_answer = {"elicitation": {"form": {}}}
    try:
        forget = {"name": "memory_forget", "arguments": {"id": ref}}
        refused = _post(served.url, 1, forget, {})["result"]
        asked = _post(served.url, 2, forget, can_answer)["result"]
        ((key, question),) = asked["inputRequests"].items()
        answer = {key: {"action": "accept", "content": {"confirm": True}}}
        forged = {**forget, "inputResponses": answer, "requestState": asked["requestState"][:-4] + "AAAA"}
        tampered = _post(served.url, 3, forged, can_answer)["error"]
        kept = not await _forgotten_in(db, ref)
        done = {**forget, "inputResponses": answer, "requestState": asked["requestState"]}
        confirmed = _post(served.url, 4, done, can_answer)["result"]
    finally:
        stop(served.process)
        served.process.stderr.close()
    assert refused["isError"] is True and "confirm: true" in refused["content"][0]["text"]
    assert asked["resultType"] == "input_required" and key == "loci.servers.confirm:confirm"
    assert question["method"] == "elicitation/create" and TEXT in question["params"]["message"]
    assert tampered["message"] == "Invalid or expired requestState" and kept
    assert confirmed["structuredContent"] == {"id": ref, "forgotten": True}


async def _forgotten_in(db: Path, ref: str) -> bool:
    async with await Store.open(db) as store:
        return await _forgotten(store, ref)
