"""The Action: the one kind of reply the model gives each turn.

    {"state": "...", "tool": "context_read", "arguments": {...}}
    {"state": "...", "answer": "...", "evidence": [{"id": "doc:1", "start": 3, "end": 9}]}

`action_schema` builds the JSON schema of every action the catalogue allows
(one branch per tool, its `arguments` being that tool's input schema, plus
the answer branch). Local models are constrained by a grammar built from it,
so their replies parse; remote models get it as structured output. The
schema can be narrowed for one turn: tools only (look before answering) or
answer only (the last turn of a budget).

With `text_answer=True` the answer branch is only the decision to answer,
`{"state": "...", "answer": true}`: the runtime then asks for the answer as
free text (`runtime.loop.decide`), since a small model writes worse inside a JSON
string than in plain words. A reply that gives the answer as a string anyway
(a model without a grammar may) is taken as written.

`parse_action` checks a reply and raises `InvalidAction` with a message
written for the model to read and correct: bad JSON, an unknown tool, wrong
arguments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from loci.memory.errors import InvalidAction
from loci.runtime.host.host import ToolSpec

__all__ = ["Action", "InvalidAction", "action_schema", "parse_action"]

MAX_EVIDENCE = 6
EVIDENCE_SCHEMA: dict[str, Any] = {
    "type": "array",
    "maxItems": MAX_EVIDENCE,
    "items": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^(doc|obs|turn|note):[0-9]{1,9}$"},
            "start": {"type": "integer", "minimum": 1},
            "end": {"type": "integer", "minimum": 1},
        },
        "required": ["id"],
    },
}


@dataclass
class Action:
    state: str
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    answer: str | None = None
    evidence: list[dict[str, Any]] = field(default_factory=list)

    @property
    def is_answer(self) -> bool:
        return self.answer is not None


def action_schema(
    tools: list[ToolSpec], *, allow_tools: bool = True, allow_answer: bool = True, text_answer: bool = False
) -> dict[str, Any]:
    # No maxLength on `state`: llama.cpp unrolls it into one grammar rule per
    # character. The state is bounded by the reply budget and the state region.
    state = {"type": "string"}
    branches: list[dict[str, Any]] = []
    if allow_tools:
        for tool in tools:
            branches.append(
                {
                    "type": "object",
                    "properties": {
                        "state": state,
                        "tool": {"const": tool.name},
                        "arguments": _clean(tool.input_schema),
                    },
                    "required": ["state", "tool", "arguments"],
                }
            )
    if (allow_answer or not branches) and text_answer:
        branches.append(
            {
                "type": "object",
                "properties": {"state": state, "answer": {"const": True}},
                "required": ["state", "answer"],
            }
        )
    elif allow_answer or not branches:
        branches.append(
            {
                "type": "object",
                "properties": {"state": state, "answer": {"type": "string"}, "evidence": EVIDENCE_SCHEMA},
                "required": ["state", "answer", "evidence"],
            }
        )
    return branches[0] if len(branches) == 1 else {"anyOf": branches}


def parse_action(
    text: str, tools: list[ToolSpec], *, allow_tools: bool = True, allow_answer: bool = True, text_answer: bool = False
) -> Action:
    """Parse and validate one reply; raise `InvalidAction` saying what to fix."""
    try:
        data = json.loads(text, strict=False)  # a raw newline inside a string is fine
    except ValueError as exc:
        raise InvalidAction(
            f"the reply is not valid JSON ({exc.msg} at character {exc.pos}); reply with one JSON object"
        ) from None
    if not isinstance(data, dict):
        raise InvalidAction(
            "the reply must be a JSON object with `state` and either `tool` and `arguments` or `answer`"
        )
    state = data.get("state", "")
    if not isinstance(state, str):
        raise InvalidAction("`state` must be a string")
    if "answer" in data:
        return _parse_answer(data, state, allow_answer, text_answer)
    if "tool" not in data:
        raise InvalidAction("the reply has neither `tool` nor `answer`")
    if not allow_tools:
        raise InvalidAction("no more tool calls are allowed: give your final `answer` now, with `evidence`")
    by_name = {tool.name: tool for tool in tools}
    name = data["tool"]
    if name not in by_name:
        known = ", ".join(sorted(by_name)) or "none"
        raise InvalidAction(f"unknown tool {name!r}; the tools are: {known}")
    arguments = data.get("arguments", {})
    if not isinstance(arguments, dict):
        raise InvalidAction(f"`arguments` for {name} must be a JSON object")
    error = _first_error(arguments, by_name[name].input_schema)
    if error:
        raise InvalidAction(f"wrong arguments for {name}: {error}")
    return Action(state=state, tool=name, arguments=arguments)


def _parse_answer(data: dict[str, Any], state: str, allow_answer: bool, text_answer: bool) -> Action:
    if not allow_answer:
        raise InvalidAction("look at the material with a tool before you answer")
    answer = data["answer"]
    if text_answer and answer is True:
        return Action(state=state, answer="")  # the text is asked for next
    if not isinstance(answer, str):
        raise InvalidAction("`answer` must be a string")
    evidence = data.get("evidence", [])
    error = _first_error(evidence, EVIDENCE_SCHEMA)
    if error:
        raise InvalidAction(f"wrong evidence: {error}")
    return Action(state=state, answer=answer, evidence=evidence)


def _first_error(value: Any, schema: dict[str, Any]) -> str | None:
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def _clean(schema: Any) -> Any:
    """Drop `title` keys: they cost grammar states and prompt tokens and guide nothing."""
    if isinstance(schema, dict):
        return {k: _clean(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_clean(v) for v in schema]
    return schema
