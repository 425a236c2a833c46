"""One turn's pieces: what it may do, what it decided, and the checks on a reply.

`TurnRules` says which actions a turn allows (the last turn only answers, a
forced or first look only calls tools). The decision of a turn is one of
three typed outcomes, as openai-agents' `NextStep*`:

    FinalAnswer   the model answered, with evidence that exists
    ToolCall      the model called a tool; the loop dispatches it
    BudgetSpent   the ledger ran out before the model was asked

The checks turn a reply that parses but is still wrong (a working state over
its size, evidence that does not exist) into an `InvalidAction` for the
model to correct, or, on the last try, into a cut state or a reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from loci.memory.context.store import ContextStore
from loci.runtime.host.host import ToolSpec
from loci.runtime.loop.action import Action, InvalidAction
from loci.runtime.loop.records import TurnTrace
from loci.runtime.models.base import Reply
from loci.runtime.prompt.build import Prompt, fit
from loci.runtime.reading.evidence import Cited, check_evidence

__all__ = [
    "BudgetSpent",
    "FinalAnswer",
    "NextStep",
    "ToolCall",
    "TurnRules",
    "check_answer_evidence",
    "check_state",
    "trace_of",
]


@dataclass(frozen=True)
class TurnRules:
    """The actions one turn allows: which tools, and whether it may answer."""

    tools: list[ToolSpec]
    allow_tools: bool
    allow_answer: bool

    @property
    def forced(self) -> str | None:
        return self.tools[0].name if self.allow_tools and not self.allow_answer and len(self.tools) == 1 else None


@dataclass(frozen=True)
class FinalAnswer:
    trace: TurnTrace
    evidence: list[Cited]
    reason: str | None = None


@dataclass(frozen=True)
class ToolCall:
    trace: TurnTrace


@dataclass(frozen=True)
class BudgetSpent:
    reason: str


NextStep = FinalAnswer | ToolCall | BudgetSpent


def check_state(action: Action, size: int, count: Callable[[str], int], *, last_try: bool) -> bool:
    """Hold the state to `size` tokens: send an over-long one back, or on the last try cut it (True: cut)."""
    tokens = count(action.state)
    if tokens <= size:
        return False
    if not last_try:
        raise InvalidAction(f"`state` is {tokens} tokens; the limit is {size}: consolidate it, keep what still matters")
    action.state = fit(action.state, size, count)[0]
    return True


async def check_answer_evidence(
    contexts: ContextStore, action: Action, *, last_try: bool
) -> tuple[list[Cited], str | None]:
    """The cited spans, resolved; a span that does not exist is sent back, or on the last try, reported."""
    try:
        return await check_evidence(contexts, action.evidence), None
    except InvalidAction as exc:
        if not last_try:
            raise InvalidAction(f"{exc}; cite only ids and line ranges you have seen") from None
        return [], f"unverified evidence: {exc}"


def trace_of(turn: int, action: Action, prompt: Prompt, reply: Reply, retries: int, seconds: float) -> TurnTrace:
    return TurnTrace(
        turn=turn,
        action=action,
        prompt_tokens=dict(prompt.tokens),
        evaluated_tokens=reply.evaluated_tokens,
        reused_tokens=reply.reused_tokens,
        completion_tokens=reply.completion_tokens,
        retries=retries,
        seconds=seconds,
    )
