"""The early answers of `loci serve` on stdio: what the front answers itself, what waits, what it hands over."""

from __future__ import annotations

import json

from loci.servers.transports.ready import Front, Listing

TOOL = {"name": "memory_recall", "inputSchema": {"type": "object"}}
OPENED = {
    "capabilities": {"tools": {"listChanged": False}},
    "protocolVersion": "2025-06-18",
    "serverInfo": {"name": "loci", "version": ""},
}
LISTING = Listing(
    initialize={"2025-06-18": OPENED, "2026-07-28": None, "*": {**OPENED, "protocolVersion": "2025-11-25"}},
    tools={"context": [{**TOOL, "name": "context_read"}], "memory": [TOOL]},
)


def _line(ident: int | None, method: str, params: dict | None = None) -> str:
    message = {"jsonrpc": "2.0", "method": method} | ({"id": ident} if ident is not None else {})
    return json.dumps(message | ({"params": params} if params is not None else {}))


def _opening(version: str = "2025-06-18") -> str:
    hello = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    return _line(7, "initialize", hello)


def test_initialize_and_tools_list_are_answered_and_a_call_waits_for_the_server() -> None:
    front = Front(LISTING, ("memory", "context"), "0.1.0")
    answered = json.loads(front.take(_opening()) or "")
    assert answered["id"] == 7 and answered["result"]["serverInfo"] == {"name": "loci", "version": "0.1.0"}
    assert answered["result"]["protocolVersion"] == "2025-06-18"
    assert front.take(_line(None, "notifications/initialized")) == ""
    call = _line(8, "tools/call", {"name": "memory_recall", "arguments": {"query": "x"}})
    assert front.take(call) is None
    listed = json.loads(front.take(_line(9, "tools/list")) or "")
    assert [tool["name"] for tool in listed["result"]["tools"]] == ["memory_recall", "context_read"]
    assert front.take(_line(10, "tools/list", {"cursor": "2"})) is None
    assert json.loads(front.take(_line(11, "ping")) or "")["result"] == {}
    assert front.handover() == [_opening(), _line(None, "notifications/initialized"), call, front.waiting[-1]]
    echo = json.dumps({"jsonrpc": "2.0", "id": 7, "result": OPENED})
    assert front.is_echo(echo) and not front.is_echo(json.dumps({"jsonrpc": "2.0", "id": 8, "result": {}}))


def test_an_unknown_version_gets_the_servers_answer_and_a_refused_one_waits() -> None:
    front = Front(LISTING, ("memory",), "0.1.0")
    assert json.loads(front.take(_opening("1999-01-01")) or "")["result"]["protocolVersion"] == "2025-11-25"
    refused = Front(LISTING, ("memory",), "0.1.0")
    assert refused.take(_opening("2026-07-28")) is None
    assert refused.take(_line(2, "tools/list")) is None and refused.handover() == [
        _opening("2026-07-28"),
        _line(2, "tools/list"),
    ]


def test_a_client_that_opens_otherwise_is_left_to_the_server() -> None:
    front = Front(LISTING, ("memory",), "0.1.0")
    discover = _line(1, "server/discover")
    assert front.take(discover) is None and front.take("not json") is None
    assert front.take(_opening()) is None  # an initialize after a waiting line waits too, so the order holds
    assert front.handover() == [discover, "not json", _opening()]
    assert not front.is_echo(json.dumps({"jsonrpc": "2.0", "id": 7, "result": OPENED}))


def test_a_line_too_deep_to_parse_waits_for_the_server() -> None:
    front = Front(LISTING, ("memory",), "0.1.0")
    assert json.loads(front.take(_opening()) or "")["id"] == 7
    deep = '{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": ' + '{"a": ' * 1500 + "{}" + "}" * 1501
    assert front.take(deep) is None and front.waiting == [deep]


def test_codex_s_tools_list_with_a_progress_token_is_answered_and_other_meta_waits() -> None:
    # Codex does not wait for a pending server's tools/list: answered only once the server loaded, its tools
    # were missing from the session's first model request.
    front = Front(LISTING, ("memory",), "0.1.0")
    assert (
        json.loads(front.take(_opening()) or "")["id"] == 7
        and front.take(_line(None, "notifications/initialized")) == ""
    )
    for ident, meta in enumerate(({"progressToken": 0}, {"progressToken": "t"}, {})):
        listed = json.loads(front.take(_line(ident, "tools/list", {"_meta": meta})) or "")
        assert listed["id"] == ident and [tool["name"] for tool in listed["result"]["tools"]] == ["memory_recall"]
    refused = [{"progressToken": True}, {"progressToken": 1.5}, {"progressToken": 0, "x": 1}, []]
    for ident, meta in enumerate(refused, start=10):
        assert front.take(_line(ident, "tools/list", {"_meta": meta})) is None
    assert front.take(_line(20, "tools/list", {"_meta": {}, "cursor": "2"})) is None
    assert front.take(json.dumps({"jsonrpc": "2.0", "id": 21, "method": "tools/list", "params": []})) is None
    assert len(front.waiting) == 6
