"""The agent: turn loop, model backends, budgets, MCP host, CLI.

    from runtime import Limits, RunConfig, load_model, open_session

    model = await load_model("llama:default")
    config = RunConfig(limits=Limits(max_turns=8))
    async with open_session(model, "loci.db", config, files=["notes.md"]) as session:
        result = await session.agent.run("What changed in March?")

The errors it raises are those of `memory.errors`, re-exported here.
"""

from memory.errors import (
    BackendError,
    BackendTimeout,
    BackendUnreachable,
    InvalidAction,
    LociError,
    ModelBehaviorError,
    UsageError,
)
from runtime.agent import Agent
from runtime.host.host import McpHost, ToolResult
from runtime.models.base import Model, Reply, Request
from runtime.models.ledger import Ledger
from runtime.models.scripted import ScriptedModel
from runtime.models.specs import load_model, parse_spec
from runtime.prompt.build import RegionSizes
from runtime.prompt.notes import NoteMode
from runtime.run import Limits, RunConfig, RunResult, TurnTrace
from runtime.session import Session, open_session

__all__ = [
    "Agent",
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
