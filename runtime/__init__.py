"""The agent: turn loop, model backends, budgets, MCP host, CLI.

    from runtime import Limits, load_model, open_session

    model = await load_model("llama:default")
    async with open_session(model, "loci.db", files=["notes.md"], limits=Limits(max_turns=8)) as session:
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
from runtime.agent import Agent, Limits, RunResult, TurnTrace
from runtime.host import McpHost, ToolResult
from runtime.model import Model, Reply, Request
from runtime.prompt import Budgets
from runtime.scripted import ScriptedModel
from runtime.session import Session, open_session
from runtime.specs import load_model, parse_spec

__all__ = [
    "Agent",
    "BackendError",
    "BackendTimeout",
    "BackendUnreachable",
    "Budgets",
    "InvalidAction",
    "Limits",
    "LociError",
    "McpHost",
    "Model",
    "ModelBehaviorError",
    "Reply",
    "Request",
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
