"""The turn loop: decide the next step, delegate everything else.

Each turn is a short pipeline, one method a layer:

    _decide   budget the prompt, ask the model, validate   (runtime.prompt, runtime.action, runtime.turn)
    _dispatch call the tool through the MCP host           (runtime.host)
    _record   store the observation and the turn           (memory.context)

`_decide` returns one of three typed outcomes (`runtime.turn`): an answer
with checked evidence (finish), a tool call (dispatch, record, go on), or
the budget spent (finish with the best partial answer: the working state).
The last turn the limits allow narrows the action schema to answers, so a
run always ends with one; when documents are loaded, the first turn narrows
it to tools, so the model looks before it answers. Every model call is
charged to the run's `Ledger`, its own or shared with the runs above it (a
recursion, see `runtime.recursion`). Notes that keep the window within its
size are written by `runtime.notes`.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Sequence

from memory.context import ContextObject, ContextStore
from memory.errors import ModelBehaviorError, UsageError
from runtime.action import Action, InvalidAction, action_schema, parse_action
from runtime.host import McpHost, ToolResult
from runtime.ledger import Ledger
from runtime.model import Model, Request
from runtime.notes import NoteWriter
from runtime.prompt import build_prompt, fit
from runtime.regions import Observation, Regions
from runtime.run import RunConfig, RunResult, TurnTrace
from runtime.turn import (
    BudgetSpent,
    FinalAnswer,
    NextStep,
    ToolCall,
    TurnRules,
    check_answer_evidence,
    check_state,
    trace_of,
)
from runtime.window import TurnLine, Window

__all__ = ["Agent", "OnTurn"]

RETRY_TEMPERATURE = 0.7
OnTurn = Callable[[TurnTrace], Awaitable[None] | None]


class Agent:
    """Runs tasks on one model, with tools from one MCP host, over one context store."""

    def __init__(self, model: Model, host: McpHost, contexts: ContextStore, config: RunConfig | None = None, *, ledger: Ledger | None = None, on_turn: OnTurn | None = None) -> None:
        self.model, self.host, self.contexts = model, host, contexts
        self.config = config or RunConfig()
        self.limits = self.config.limits
        self.sizes = self.config.sizes_for(model.context_window)
        # A ledger handed in is shared with other runs; otherwise the run's own limits open one.
        self.ledger = ledger or Ledger(max_tokens=self.limits.max_tokens, max_seconds=self.limits.max_seconds)
        self.on_turn = on_turn
        self.window = Window(contexts, model.count_tokens)
        self.notes = NoteWriter(model, self.window, self.sizes, self.config.note_mode, host, self.ledger)

    async def run(self, task: str, *, state: str = "", keep_window: bool = False, objects: list[ContextObject] | None = None, tool_choice: Sequence[str] = ()) -> RunResult:
        """Run `task` to an answer. `state` seeds the working state; `keep_window` continues the last run's window;
        `objects`, when given, replaces the loaded documents in the task's listing; `tool_choice[i]`, when
        given, is the tool turn i+1 must call (as OpenAI's `tool_choice` forces one function)."""
        unknown = [name for name in tool_choice if name not in {tool.name for tool in self.host.tools}]
        if unknown:
            raise UsageError(f"tool_choice names unknown tools: {', '.join(unknown)}")
        if objects is None:
            objects = await self.contexts.list(["doc"])
        self.ledger.start()
        if not keep_window:
            self.window.items = []
        regions = Regions(task, self.host.tools, objects, self.window, state=state)
        result = RunResult(answer="", status="partial")
        for turn in range(1, self.limits.max_turns + 1):
            step = await self._decide(regions, turn, self._rules(turn, bool(objects), tool_choice), result)
            if isinstance(step, BudgetSpent):
                return self._partial(result, regions, step.reason)
            result.turns.append(step.trace)
            regions.state = step.trace.action.state
            if isinstance(step, FinalAnswer):
                return await self._finish(result, step)
            await self._record(regions, step.trace, await self._dispatch(step.trace.action))
            await self._notify(step.trace)
        return self._partial(result, regions, "the turn limit was reached")  # pragma: no cover

    def _rules(self, turn: int, has_documents: bool, tool_choice: Sequence[str]) -> TurnRules:
        """What this turn may do: the last turn only answers; a forced or first look only calls tools."""
        if turn == self.limits.max_turns:
            return TurnRules(self.host.tools, allow_tools=False, allow_answer=True)
        if turn <= len(tool_choice):
            forced = [tool for tool in self.host.tools if tool.name == tool_choice[turn - 1]]
            return TurnRules(forced, allow_tools=True, allow_answer=False)
        look = turn == 1 and self.limits.look_first and has_documents
        return TurnRules(self.host.tools, allow_tools=True, allow_answer=not look)

    async def _decide(self, regions: Regions, turn: int, rules: TurnRules, result: RunResult) -> NextStep:
        """Ask until the reply is a valid action (answers: with evidence that exists), a bounded number of times."""
        if reason := self.ledger.exhausted():
            return BudgetSpent(reason)
        await self.notes.compact()
        allow = {"allow_tools": rules.allow_tools, "allow_answer": rules.allow_answer}
        schema = action_schema(rules.tools, **allow)
        retries, started = 0, time.monotonic()
        while True:
            prompt = build_prompt(regions.render(**allow, forced=rules.forced), self.sizes, self.model.count_tokens)
            # A retry at temperature 0 would repeat the same mistake: sample a little on retries.
            temperature = 0.0 if retries == 0 else RETRY_TEMPERATURE
            reply = await self.model.generate(Request(prompt.messages, schema=schema, max_tokens=self.sizes.reply, temperature=temperature))
            result.tokens += reply.prompt_tokens + reply.completion_tokens
            self.ledger.charge(reply.prompt_tokens + reply.completion_tokens)
            last_try = retries >= self.limits.max_retries
            try:
                action = parse_action(reply.text, rules.tools, **allow)
                state_cut = check_state(action, self.sizes.state, self.model.count_tokens, last_try=last_try)
                if action.is_answer:
                    evidence, unverified = await check_answer_evidence(self.contexts, action, last_try=last_try)
            except InvalidAction as exc:
                retries += 1
                if retries > self.limits.max_retries:
                    raise ModelBehaviorError(f"turn {turn}: the model's reply was invalid {retries} times; last: {exc}") from exc
                regions.error = str(exc)
                continue
            regions.error = None
            trace = trace_of(turn, action, prompt, reply, retries, time.monotonic() - started)
            trace.state_cut = state_cut
            return FinalAnswer(trace, evidence, unverified) if action.is_answer else ToolCall(trace)

    async def _dispatch(self, action: Action) -> ToolResult:
        assert action.tool is not None
        return await self.host.call(action.tool, action.arguments)

    async def _record(self, regions: Regions, trace: TurnTrace, result: ToolResult) -> None:
        """Store the observation and the turn as context objects; show the head of a large result."""
        obj = await self.contexts.add_text("obs", f"turn {trace.turn} {trace.action.tool}", result.text, {"error": result.is_error})
        trace.observation_id, trace.result_tokens = obj.id, obj.tokens  # counted once, as it was stored
        head, cut = fit(result.text, self.sizes.observation - 60, self.model.count_tokens)
        regions.observation = Observation(obj.id, trace.action.tool or "", head, trace.result_tokens, cut, result.is_error)
        line = TurnLine(trace.turn, trace.action.tool or "", trace.action.arguments, obj.id, trace.result_tokens, result.is_error)
        turn_obj = await self.contexts.add_text("turn", f"turn {trace.turn}", line.render(preview=result.text), {"observation": obj.id})
        line.turn_id = turn_obj.id
        self.window.append(line)

    async def _finish(self, result: RunResult, step: FinalAnswer) -> RunResult:
        result.answer = step.trace.action.answer or ""
        result.evidence, result.reason = step.evidence, step.reason
        result.status = "partial" if result.reason else "done"
        await self._notify(step.trace)
        return result

    async def _notify(self, trace: TurnTrace) -> None:
        if self.on_turn is not None:
            outcome = self.on_turn(trace)
            if inspect.isawaitable(outcome):
                await outcome

    def _partial(self, result: RunResult, regions: Regions, reason: str) -> RunResult:
        result.answer = regions.state or "(no findings yet)"
        result.status, result.reason = "partial", reason
        return result
