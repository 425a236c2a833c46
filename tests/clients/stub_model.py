"""A model server of the tests' own on 127.0.0.1: Anthropic Messages for Claude Code, OpenAI Responses for Codex.

It records every request body (`StubModel.requests`) and answers each from
a small policy, not a script, since a client sends requests of its own
(titles, a warm-up) in an order the tests do not control: when the request
offers the tool named by `call` (its name ends with it, as clients prefix an
MCP server's tools; Codex offers them inside a `namespace` tool, named
`mcp__SERVER`, and the call names that namespace) and the conversation
holds no tool result yet, the answer calls it with `arguments`; otherwise
the answer is the text `reply`.
Both wire formats are streamed as server-sent events, as the clients ask.
The server runs in a thread (`with StubModel(...) as stub:`) and stops when
the block ends.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["StubModel"]


@dataclass
class StubModel:
    """The stub server: `url` once entered; `requests` the bodies received, in order."""

    call: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    reply: str = "Noted."
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def __enter__(self) -> StubModel:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                stub.paths.append(f"GET {self.path}")
                self._send(404, "application/json", b'{"error": "not served"}')

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                stub.paths.append(f"POST {self.path}")
                body = json.loads(raw or b"{}")
                stub.requests.append(body)
                if self.path.startswith("/v1/messages/count_tokens"):
                    self._send(200, "application/json", b'{"input_tokens": 10}')
                elif self.path.startswith("/v1/messages"):
                    self._send(200, "text/event-stream", _sse(stub.anthropic(body)))
                elif self.path.startswith("/v1/responses"):
                    self._send(200, "text/event-stream", _sse(stub.responses(body)))
                else:
                    self._send(404, "application/json", b'{"error": "not served"}')

            def _send(self, status: int, kind: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def _tool(self, names: list[str], answered: bool) -> str | None:
        if not self.call or answered:
            return None
        return next((name for name in names if name.endswith(self.call)), None)

    def anthropic(self, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The Messages stream answering `body`."""
        messages = body.get("messages") or []
        answered = any(
            isinstance(block, dict) and block.get("type") == "tool_result"
            for message in messages
            if isinstance(message.get("content"), list)
            for block in message["content"]
        )
        tool = self._tool([t.get("name", "") for t in body.get("tools") or []], answered)
        start = {"id": "msg_stub", "type": "message", "role": "assistant", "model": body.get("model"), "content": []}
        start |= {"stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
        if tool:
            block = {"type": "tool_use", "id": "toolu_stub", "name": tool, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(self.arguments)}
            stop = "tool_use"
        else:
            block, delta, stop = {"type": "text", "text": ""}, {"type": "text_delta", "text": self.reply}, "end_turn"
        return [
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}}),
            ("message_stop", {"type": "message_stop"}),
        ]

    def responses(self, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The Responses stream answering `body`."""
        items = body.get("input") or []
        answered = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
        spaces = {
            str(inner.get("name")): str(tool.get("name"))
            for tool in body.get("tools") or []
            if tool.get("type") == "namespace"
            for inner in tool.get("tools") or []
        }
        tools = [str(t.get("name")) for t in body.get("tools") or [] if t.get("type") == "function"]
        tool = self._tool([*tools, *spaces], answered)
        if tool:
            item = {"type": "function_call", "id": "fc_stub", "call_id": "call_stub", "name": tool}
            item |= {"namespace": spaces[tool]} if tool in spaces else {}
            item["arguments"] = json.dumps(self.arguments)
        else:
            text = {"type": "output_text", "text": self.reply, "annotations": []}
            item = {"type": "message", "id": "msg_stub", "role": "assistant", "status": "completed", "content": [text]}
        response = {"id": "resp_stub", "object": "response", "status": "completed", "output": [item]}
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        return [
            ("response.created", {"type": "response.created", "response": {"id": "resp_stub"}}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": {**response, "usage": usage}}),
        ]


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()
