"""The agent: turn loop, model backends, budgets, MCP host, CLI.

    from runtime import Limits, RunConfig, load_model, open_session

    model = await load_model("llama:default")
    config = RunConfig(limits=Limits(max_turns=8))
    async with open_session(model, "loci.db", config, files=["notes.md"]) as session:
        result = await session.agent.run("What changed in March?")

The errors it raises are those of `memory.errors`, re-exported here. The
names are resolved when first used (a module `__getattr__`, memory/lazy.py), not when the
package is imported: `loci --version` imports `runtime.cli.main`, and must
not pay for the MCP SDK or llama.cpp that the agent needs.
"""

from __future__ import annotations

from memory.lazy import lazy_members

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
    "Agent": "runtime.loop.agent",
    "Background": "runtime.session.background",
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
    **dict.fromkeys(("Limits", "RunConfig", "RunResult", "TurnTrace"), "runtime.loop.records"),
    "Session": "runtime.session.session",
    "open_session": "runtime.session.session",
}


__getattr__ = lazy_members(__name__, _HOMES)
