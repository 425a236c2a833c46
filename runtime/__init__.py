"""The agent: turn loop, model backends, budgets, MCP host, CLI.

    from runtime import Limits, load_model, open_session

    model = await load_model("llama:default")
    async with open_session(model, "loci.db", files=["notes.md"], limits=Limits(max_turns=8)) as session:
        result = await session.agent.run("What changed in March?")
"""

from runtime.agent import Agent, Limits, RunResult, TurnTrace
from runtime.host import McpHost, ToolResult
from runtime.model import Model, Reply, Request
from runtime.prompt import Budgets
from runtime.scripted import ScriptedModel
from runtime.session import Session, open_session
from runtime.specs import load_model, parse_spec

__all__ = [
    "Agent",
    "Budgets",
    "Limits",
    "McpHost",
    "Model",
    "Reply",
    "Request",
    "RunResult",
    "ScriptedModel",
    "Session",
    "ToolResult",
    "TurnTrace",
    "load_model",
    "open_session",
    "parse_spec",
]
