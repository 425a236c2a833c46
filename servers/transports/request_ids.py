"""A request whose id JSON-RPC cannot answer by, answered anyway: an Invalid Request with a null id.

MCP's request ids are strings or integers (the SDK's `RequestId`: a strict
int, or a str). A line with a `method` and an id of any other kind (1.5,
`true`, `{}`, `[]`, `null`) does not validate as a request, so the SDK reads
it as a notification, whose extra `id` member it drops, and never answers:
a client that sent it as a request waits for ever. JSON-RPC 2.0 says what
to answer a request that is not valid and whose id cannot be used: an
Invalid Request (-32600) with `"id": null`. `answer_to_invalid_id` gives
that line, and every stdio path gives it at the same point, before the
line reaches anything that would drop it: the early answers while the
server loads (servers/transports/ready.py), and once it has loaded the
lines the thin path passes on to the SDK (servers/transports/thin.py), on
which the SDK path runs too with `LOCI_SERVE_THIN=0`. Over HTTP the SDK's
modern entry answers such a body itself (400, -32600, a null id), but a
session of the handshake era takes it for a notification (202, no answer),
so `ThinHttp` (servers/transports/thin_http.py), in front of both, answers
it with this line and a 400 before either sees it.

Most lines need no parse to be cleared: `suspect` looks for an `"id"` member
whose value is not plainly a string or an integer, and for the escapes
(`\\u0069`) that could spell the key otherwise; only such lines are parsed
(the thin path has parsed its calls already and passes what it parsed).
This module imports only the standard library, as ready.py requires.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["INVALID_REQUEST", "answer_to_invalid_id", "suspect", "valid_id"]

INVALID_REQUEST = -32600
_UNPLAIN_ID = re.compile(r'"id"\s*:\s*(?!"|-?\d+\s*[,}\]])')
_UNPLAIN_ID_BYTES = re.compile(_UNPLAIN_ID.pattern.encode())
_KINDS = {float: "a number with a fraction", bool: "a boolean", dict: "an object", list: "an array"}


def valid_id(ident: object) -> bool:
    """Whether `ident` is an id a request may have: a string, or an integer that is not a boolean."""
    return isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))


def suspect(line: str | bytes) -> bool:
    """Whether `line` (a line, or an HTTP body) may hold a request whose id is not valid (False: it certainly does
    not)."""
    if isinstance(line, bytes):
        return _UNPLAIN_ID_BYTES.search(line) is not None or b"\\u" in line
    return _UNPLAIN_ID.search(line) is not None or "\\u" in line


def answer_to_invalid_id(message: Any) -> str | None:
    """The line that answers `message` (a parsed line) when it is a request whose id is not valid, else None."""
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None
    ident = message["id"]
    if valid_id(ident):
        return None
    kind = "null" if ident is None else _KINDS.get(type(ident), type(ident).__name__)
    why = f"not a valid JSON-RPC request: its id is {kind}, and an id is a string or an integer"
    error = {"code": INVALID_REQUEST, "message": why}
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": error})
