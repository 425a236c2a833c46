"""Asking an MCP client's user before a call that changes what memory holds: `memory_forget`, `memory_restore`.

The `loci` server (servers/app.py) hands each call here before routing it.
A guarded call goes ahead at once when it carries `confirm: true` (the way
for a client that cannot ask its user); else the client is asked, with what
will change and the memory's text, when it can answer:

- on the 2026-07-28 protocol the call's result is an `InputRequiredResult`
  holding one form elicitation, and the client calls again with the answer
  (`inputResponses`) and the `requestState` it was given;
- on the handshake protocols (2025 and before) the server sends the client an
  `elicitation/create` request in the middle of the call.

Both are the SDK's resolver machinery (`mcp.server.mcpserver.resolve`): one
resolver per guarded call returns an `Elicit`, and `resolve_arguments` either
asks or finds the answer, once per question (an answer to a question worded
differently, because the memory changed between the rounds, asks again). The
`requestState` is sealed by the SDK's `RequestStateBoundary` on the server.

A client that declared no form elicitation (or a stateless HTTP connection on
the old protocol, which cannot carry a request to the client) is refused with
a result saying what would change and that `confirm: true` goes ahead. A
declined or cancelled question changes nothing and says so. The text of the
memory is quoted as data in the question, never as words of the server's.
Hooks (memory/hooks) write through the store, not MCP, so they are never asked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from mcp.server.elicitation import AcceptedElicitation
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import Elicit, Resolve, build_resolver_plans, resolve_arguments
from mcp.types import CallToolResult, InputRequiredResult, TextContent
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, Field

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError
from loci.memory.graph.records import parse_node_id

__all__ = ["GUARDED", "Confirm", "Confirmations"]

GUARDED: Final = {"memory_forget": "forget", "memory_restore": "bring back"}
SHOWN_CHARS = 300
_ASKING_VERSION = "2026-07-28"


class Confirm(BaseModel):
    """The form a client shows its user: one yes or no."""

    confirm: bool = Field(description="Go ahead with the change")


class Confirmations:
    """The gate for the guarded tools of one project of a store."""

    def __init__(self, store: Store, project: str) -> None:
        self.store = store
        self.project = project

    async def gate(
        self, context: Context[Any, Any], name: str, arguments: Mapping[str, Any]
    ) -> dict[str, Any] | CallToolResult | InputRequiredResult:
        """The arguments to call `name` with (without `confirm`), or the result to answer instead: the question to
        ask, a refusal, or the word that nothing changed."""
        verb = GUARDED.get(name)
        called = {key: value for key, value in arguments.items() if key != "confirm"}
        if verb is None or arguments.get("confirm") is True:
            return called
        change = await self._change(verb, called.get("id"))
        if change is None:
            return called  # no such memory: the tool's own error says so
        if not _can_ask(context):
            said = f"{name} would {change}. This client cannot be asked to confirm it: call again with confirm: true."
            return CallToolResult(content=[TextContent(type="text", text=said)], is_error=True)
        outcome = await self._asked(context, called, f"Loci: {change}?")
        if isinstance(outcome, InputRequiredResult):
            return outcome
        if isinstance(outcome, AcceptedElicitation) and outcome.data.confirm:
            return called
        said = f"Nothing changed: the user did not confirm that {name} should {change}."
        return CallToolResult(
            content=[TextContent(type="text", text=said)],
            structured_content={"id": f"mem:{parse_node_id(called['id'])}", "changed": False, "message": said},
        )

    async def _asked(
        self, context: Context[Any, Any], arguments: Mapping[str, Any], question: str
    ) -> InputRequiredResult | Any:
        async def confirm_change() -> Elicit[Confirm]:
            return Elicit(question, Confirm)

        confirm_change.__qualname__ = "confirm"  # the question's key on the wire: `servers.confirm:confirm`

        wanted = {"answer": (Resolve(confirm_change), True)}
        resolved = await resolve_arguments(wanted, build_resolver_plans(wanted, set(arguments)), arguments, context)
        return resolved if isinstance(resolved, InputRequiredResult) else resolved["answer"]

    async def _change(self, verb: str, ref: object) -> str | None:
        """What the call will change, with the memory's text quoted, or None when there is no such memory."""
        try:
            node_id = parse_node_id(str(ref))
        except NotFoundError:
            return None
        sql = "SELECT text FROM memory_nodes WHERE id = ? AND project = ?"
        rows = await self.store.read(lambda db: db.conn.execute(sql, [node_id, self.project]).fetchall())
        if not rows:
            return None
        text = rows[0][0]
        shown = text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."
        return f"{verb} mem:{node_id}, {json.dumps(shown, ensure_ascii=False)}"


def _can_ask(context: Context[Any, Any]) -> bool:
    """Whether the client can answer a form elicitation on this call's protocol and transport."""
    capabilities = context.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None or (elicitation.form is None and elicitation.url is not None):
        return False
    version = context.protocol_version
    modern = version is not None and is_version_at_least(version, _ASKING_VERSION)
    return modern or context.session.can_send_request
