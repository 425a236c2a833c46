"""The text of each prompt region, as the model reads it.

`Regions` holds one run's material (task, tools, loaded objects, working
state, recent turns, latest observation) and renders it region by region;
`runtime.prompt.build_prompt` then cuts each to its budget. The system text
depends only on the tool catalogue, so it is byte-identical every turn and a
local model serves it from its KV cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory.context import ContextObject
from runtime.action import ToolSpec
from runtime.window import Window

__all__ = ["Observation", "Regions", "system_text"]

LISTED_OBJECTS = 20

SYSTEM = """You are Loci, an agent that completes a task by browsing documents with tools.
Reply every turn with ONE JSON object, either a tool call:
{{"state": "<your working notes>", "tool": "<tool name>", "arguments": {{...}}}}
or, when you can answer:
{{"state": "<your working notes>", "answer": "<the answer>", "evidence": [{{"id": "doc:1", "start": 3, "end": 5}}]}}
Rules:
- `state` is your working memory: rewrite it each turn with the goals, constraints and findings that still matter.
- Read before you answer. Cite in `evidence` the ids and line ranges you read.
- A large result is stored as obs:N and shown in part; read on with context_read.
Tools:
{tools}"""


def system_text(tools: list[ToolSpec]) -> str:
    return SYSTEM.format(tools="\n".join(_tool_line(tool) for tool in tools))


@dataclass
class Observation:
    """The latest tool result: its head, and where the whole of it is stored."""

    id: str
    tool: str
    head: str
    tokens: int
    cut: bool
    is_error: bool

    def render(self) -> str:
        kind = "Error from" if self.is_error else "Result of"
        text = f"{kind} {self.tool} ({self.id}, {self.tokens} tokens):\n{self.head}"
        if self.cut:
            next_line = self.head.count("\n") + 1
            text += f'\n[cut: this is the head of {self.id}; read on with context_read(id="{self.id}", start={next_line})]'
        return text


@dataclass
class Regions:
    task: str
    tools: list[ToolSpec]
    objects: list[ContextObject]
    window: Window
    state: str = ""
    observation: Observation | None = None
    error: str | None = None

    def render(self, *, allow_tools: bool = True, allow_answer: bool = True, forced: str | None = None) -> dict[str, str]:
        return {
            "system": system_text(self.tools),
            "task": self._task(),
            "state": f"State (your working notes):\n{self.state or '(empty)'}",
            "window": "Recent turns:\n" + self.window.render() if self.window.items else "",
            "observation": self._observation(allow_tools, allow_answer, forced),
        }

    def _task(self) -> str:
        text = f"Task: {self.task}"
        if self.objects:
            shown = self.objects[-LISTED_OBJECTS:]
            listing = "\n".join(f"- {o.id} {o.name} ({o.lines} lines, {o.tokens} tokens)" for o in shown)
            more = len(self.objects) - len(shown)
            text += f"\nDocuments:\n{listing}" + (f"\n(and {more} more: context_list shows all)" if more else "")
        return text

    def _observation(self, allow_tools: bool, allow_answer: bool, forced: str | None) -> str:
        parts = [self.observation.render()] if self.observation else []
        if self.error:
            parts.append(f"Your last reply was rejected: {self.error}. Reply again with one valid JSON object.")
        if forced:
            parts.append(f"Call {forced} now.")
        elif not allow_tools:
            parts.append("This is your last turn: give your final answer, with evidence.")
        elif not allow_answer:
            parts.append("Look at the documents with a tool first.")
        else:
            parts.append("Reply with one JSON object: a tool call or your answer.")
        return "\n\n".join(parts)


def _tool_line(tool: ToolSpec) -> str:
    props = tool.input_schema.get("properties", {})
    required = set(tool.input_schema.get("required", []))
    args = ", ".join(name + ("" if name in required else "?") for name in props)
    summary = (tool.description or "").strip().split("\n\n")[0].replace("\n", " ")
    return f"- {tool.name}({args}): {summary}"
