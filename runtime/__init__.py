"""The agent: turn loop, model backends, budgets, MCP host, CLI.

    from loci.runtime import Limits, RunConfig, load_model, open_session

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

from loci.memory.lazy import lazy_members

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
        "loci.memory.errors",
    ),
    "Agent": "loci.runtime.loop.agent",
    "Background": "loci.runtime.session.background",
    "McpHost": "loci.runtime.host.host",
    "ToolResult": "loci.runtime.host.host",
    "Ledger": "loci.runtime.models.ledger",
    "Model": "loci.runtime.models.base",
    "Reply": "loci.runtime.models.base",
    "Request": "loci.runtime.models.base",
    "ScriptedModel": "loci.runtime.models.scripted",
    "load_model": "loci.runtime.models.specs",
    "parse_spec": "loci.runtime.models.specs",
    "RegionSizes": "loci.runtime.prompt.build",
    "NoteMode": "loci.runtime.prompt.notes",
    **dict.fromkeys(("Limits", "RunConfig", "RunResult", "TurnTrace"), "loci.runtime.loop.records"),
    "Session": "loci.runtime.session.session",
    "open_session": "loci.runtime.session.session",
}


__getattr__ = lazy_members(__name__, _HOMES)
