"""The agent: turn loop, model backends, budgets, MCP host, CLI.

    from runtime import Limits, RunConfig, load_model, open_session

    model = await load_model("llama:default")
    config = RunConfig(limits=Limits(max_turns=8))
    async with open_session(model, "loci.db", config, files=["notes.md"]) as session:
        result = await session.agent.run("What changed in March?")

The errors it raises are those of `memory.errors`, re-exported here. The
names are resolved when first used (module `__getattr__`), not when the
package is imported: `loci --version` imports `runtime.cli.main`, and must
not pay for the MCP SDK or llama.cpp that the agent needs.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "Agent",
    "Background",
    "BackendError",
    "BackendTimeout",
    "BackendUnreachable",
    "InvalidAction",
    "Ledger",
    "Limits",
    "LociError",
    "McpHost",
    "Model",
    "ModelBehaviorError",
    "NoteMode",
    "RegionSizes",
    "Reply",
    "Request",
    "RunConfig",
    "RunResult",
    "ScriptedModel",
    "Session",
    "ToolResult",
    "TurnTrace",
    "UsageError",
    "load_model",
    "open_session",
    "parse_spec",
]

_HOMES: dict[str, str] = {
    **dict.fromkeys(
        (
            "BackendError",
            "BackendTimeout",
            "BackendUnreachable",
            "InvalidAction",
            "LociError",
            "ModelBehaviorError",
            "UsageError",
        ),
        "memory.errors",
    ),
    "Agent": "runtime.agent",
    "Background": "runtime.background",
    "McpHost": "runtime.host.host",
    "ToolResult": "runtime.host.host",
    "Ledger": "runtime.models.ledger",
    "Model": "runtime.models.base",
    "Reply": "runtime.models.base",
    "Request": "runtime.models.base",
    "ScriptedModel": "runtime.models.scripted",
    "load_model": "runtime.models.specs",
    "parse_spec": "runtime.models.specs",
    "RegionSizes": "runtime.prompt.build",
    "NoteMode": "runtime.prompt.notes",
    **dict.fromkeys(("Limits", "RunConfig", "RunResult", "TurnTrace"), "runtime.run"),
    "Session": "runtime.session",
    "open_session": "runtime.session",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
