"""The turn loop: decide the next step, delegate everything else.

Each turn is a short pipeline, one method a layer:

    _prompt   budget the regions into a prompt          (runtime.prompt)
    _decide   ask the model, validate, retry on errors  (runtime.action)
    _dispatch call the tool through the MCP host        (runtime.host)
    _record   store the observation and the turn        (memory.context)

The loop itself only picks among three outcomes: an answer (check its
evidence, finish), a tool call (dispatch, record, go on), or a budget used
up (finish with the best partial answer: the working state). The last turn
a budget allows narrows the action schema to answers, so a run always ends
with one; when documents are loaded, the first turn narrows it to tools, so
the model looks before it answers. Every model call is charged to the run's
`Budget`, built from its limits or shared with the runs above it (a
recursion, see `runtime.recursion`); the run stops when it is used up.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.context import ContextObject, ContextStore
from memory.errors import BackendError, ModelBehaviorError, UsageError
from runtime.budget import Budget
from runtime.action import Action, InvalidAction, ToolSpec, action_schema, parse_action
from runtime.evidence import Cited, check_evidence
from runtime.host import McpHost, ToolResult
from runtime.model import Model, Reply, Request
from runtime.prompt import Budgets, Prompt, build_prompt, fit
from runtime.regions import Observation, Regions, system_text
from runtime.window import TurnLine, Window, extract_note, item_id

RETRY_TEMPERATURE = 0.7
NOTE_TOKENS = 192

__all__ = ["Agent", "Limits", "RunResult", "TurnTrace"]


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
class Limits:
    """What one run may spend. `None` means no limit."""

    max_turns: int = 12
    max_retries: int = 2
    max_tokens: int | None = None
    max_seconds: float | None = None
    look_first: bool = True

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise UsageError(f"--max-turns must be at least 1 (got {self.max_turns})")


@dataclass
class TurnTrace:
    """What one turn did, for `--trace` and the benchmarks."""

    turn: int
    action: Action
    prompt_tokens: dict[str, int]
    evaluated_tokens: int
    reused_tokens: int
    completion_tokens: int
    result_tokens: int = 0
    observation_id: str | None = None
    retries: int = 0
    seconds: float = 0.0
    state_cut: bool = False


@dataclass
class RunResult:
    answer: str
    status: str  # "done" or "partial"
    evidence: list[Cited] = field(default_factory=list)
    reason: str | None = None
    turns: list[TurnTrace] = field(default_factory=list)
    tokens: int = 0

    @property
    def tool_calls(self) -> int:
        return sum(1 for t in self.turns if not t.action.is_answer)


class Agent:
    """Runs tasks on one model, with tools from one MCP host, over one context store."""

    def __init__(self, model: Model, host: McpHost, contexts: ContextStore, *, budgets: Budgets | None = None, limits: Limits | None = None, on_turn: Callable[[TurnTrace], Awaitable[None] | None] | None = None, notes: str = "model", budget: Budget | None = None) -> None:
        self.model = model
        self.host = host
        self.contexts = contexts
        self.budgets = budgets or Budgets.for_window(model.context_window)
        self.limits = limits or Limits()
        self.on_turn = on_turn
        self.notes = notes
        # A budget handed in is shared with other runs; otherwise the run's own limits make one.
        self.budget = budget or Budget(max_tokens=self.limits.max_tokens, max_seconds=self.limits.max_seconds)
        self.window = Window(contexts, model.count_tokens)

    async def run(self, task: str, *, state: str = "", keep_window: bool = False, objects: list[ContextObject] | None = None, tool_choice: Sequence[str] = ()) -> RunResult:
        """Run `task` to an answer. `state` seeds the working state; `keep_window` continues the last run's window;
        `objects`, when given, replaces the loaded documents in the task's listing; `tool_choice[i]`, when
        given, is the tool turn i+1 must call (as OpenAI's `tool_choice` forces one function)."""
        known = {tool.name for tool in self.host.tools}
        unknown = [name for name in tool_choice if name not in known]
        if unknown:
            raise UsageError(f"tool_choice names unknown tools: {', '.join(unknown)}")
        if objects is None:
            objects = await self.contexts.list(["doc"])
        self.budget.start()
        if not keep_window:
            self.window.items = []
        regions = Regions(task, self.host.tools, objects, self.window, state=state)
        result = RunResult(answer="", status="partial")
        for turn in range(1, self.limits.max_turns + 1):
            stop = self.budget.exhausted()
            if stop:
                return self._partial(result, regions, stop)
            rules = self._rules(turn, bool(objects), tool_choice)
            await self._compact()
            trace = await self._decide(regions, turn, rules, result)
            result.turns.append(trace)
            action = trace.action
            regions.state = action.state
            if action.is_answer:
                return await self._finish(result, action, trace)
            observation = await self._dispatch(action)
            await self._record(regions, trace, observation)
            await self._notify(trace)
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

    async def _decide(self, regions: Regions, turn: int, rules: TurnRules, result: RunResult) -> TurnTrace:
        """Ask until the reply is a valid action (answers: with evidence that exists), a bounded number of times."""
        allow_tools, allow_answer = rules.allow_tools, rules.allow_answer
        schema = action_schema(rules.tools, allow_tools=allow_tools, allow_answer=allow_answer)
        retries, started = 0, time.monotonic()
        while True:
            prompt = self._prompt(regions, allow_tools=allow_tools, allow_answer=allow_answer, forced=rules.forced)
            # A retry at temperature 0 would repeat the same mistake: sample a little on retries.
            temperature = 0.0 if retries == 0 else RETRY_TEMPERATURE
            reply = await self.model.generate(Request(prompt.messages, schema=schema, max_tokens=self.budgets.reply, temperature=temperature))
            result.tokens += reply.prompt_tokens + reply.completion_tokens
            self._charge(reply)
            try:
                action = parse_action(reply.text, rules.tools, allow_tools=allow_tools, allow_answer=allow_answer)
                state_cut = self._check_state(action, last_try=retries >= self.limits.max_retries)
                if action.is_answer:
                    await self._check_evidence(result, action, last_try=retries >= self.limits.max_retries)
            except InvalidAction as exc:
                retries += 1
                if retries > self.limits.max_retries:
                    raise ModelBehaviorError(f"turn {turn}: the model's reply was invalid {retries} times; last: {exc}") from exc
                regions.error = str(exc)
                continue
            regions.error = None
            trace = _trace(turn, action, prompt, reply, retries, time.monotonic() - started)
            trace.state_cut = state_cut
            return trace

    def _check_state(self, action: Action, *, last_try: bool) -> bool:
        """Hold the state to S tokens: send an over-long one back, or on the last try cut it (and say so)."""
        size = self.model.count_tokens(action.state)
        if size <= self.budgets.state:
            return False
        if not last_try:
            raise InvalidAction(f"`state` is {size} tokens; the limit is {self.budgets.state}: consolidate it, keep what still matters")
        action.state = fit(action.state, self.budgets.state, self.model.count_tokens)[0]
        return True

    async def _compact(self) -> None:
        """Prune-and-write: when the window outgrows W, fold its oldest items into one note."""
        if self.window.tokens() > self.budgets.window:
            # Free a quarter of the window net of the note that replaces it: a note costs a model call,
            # so each fold frees room for several turns rather than one.
            target = max(0, self.budgets.window * 3 // 4 - self._note_budget())
            await self._fold(self.window.oldest_to_prune(target))

    async def prune(self) -> str | None:
        """Fold the older half of the window into a note now (a person's `/prune`); the note's id, or None."""
        if len(self.window.items) < 2:
            return None
        return await self._fold(self.window.items[: len(self.window.items) // 2 or 1])

    async def _fold(self, items: list[Any]) -> str:
        text, method = await self._write_note(items, self._note_budget())
        line = await self.window.prune(text, [item_id(item) for item in items], method=method)
        return line.note_id

    def _note_budget(self) -> int:
        """A note is short: a quarter of the window, at most NOTE_TOKENS (a local model pays per token)."""
        return max(32, min(self.budgets.window // 4, NOTE_TOKENS))

    async def _write_note(self, items: list[Any], budget: int) -> tuple[str, str]:
        """A short note on the pruned items, by the model in one bounded call; a marked extract without one."""
        if self.notes == "model":
            lines = "\n".join(item.render() for item in items)
            ask = (
                f"Summarise these past turns in at most {budget * 3 // 4} words. Keep every constraint, "
                f"finding and id that may still matter; drop the rest.\n\n{lines}"
            )
            messages = [{"role": "system", "content": system_text(self.host.tools)}, {"role": "user", "content": ask}]
            try:
                reply = await self.model.generate(Request(messages, max_tokens=budget, purpose="note"))
                self._charge(reply)
                if reply.text.strip():
                    return fit(reply.text.strip(), budget, self.model.count_tokens)[0], "model"
            except BackendError:
                pass  # the note falls back to an extract; the turns are in the store either way
        return extract_note(items, budget, self.model.count_tokens), "extract"

    async def _check_evidence(self, result: RunResult, action: Action, *, last_try: bool) -> None:
        """Resolve the cited spans; a span that does not exist is sent back, or on the last try, reported."""
        try:
            result.evidence = await check_evidence(self.contexts, action.evidence)
        except InvalidAction as exc:
            if not last_try:
                raise InvalidAction(f"{exc}; cite only ids and line ranges you have seen") from None
            result.evidence, result.reason = [], f"unverified evidence: {exc}"

    def _prompt(self, regions: Regions, *, allow_tools: bool, allow_answer: bool, forced: str | None = None) -> Prompt:
        text = regions.render(allow_tools=allow_tools, allow_answer=allow_answer, forced=forced)
        return build_prompt(text, self.budgets, self.model.count_tokens)

    async def _dispatch(self, action: Action) -> ToolResult:
        assert action.tool is not None
        return await self.host.call(action.tool, action.arguments)

    async def _record(self, regions: Regions, trace: TurnTrace, result: ToolResult) -> None:
        """Store the observation and the turn as context objects; show the head of a large result."""
        count = self.model.count_tokens
        obj = await self.contexts.add_text("obs", f"turn {trace.turn} {trace.action.tool}", result.text, {"error": result.is_error})
        trace.observation_id, trace.result_tokens = obj.id, obj.tokens  # counted once, as it was stored
        head, cut = fit(result.text, self.budgets.observation - 60, count)
        regions.observation = Observation(obj.id, trace.action.tool or "", head, trace.result_tokens, cut, result.is_error)
        line = TurnLine(trace.turn, trace.action.tool or "", trace.action.arguments, obj.id, trace.result_tokens, result.is_error)
        turn_obj = await self.contexts.add_text("turn", f"turn {trace.turn}", line.render(preview=result.text), {"observation": obj.id})
        line.turn_id = turn_obj.id
        self.window.append(line)

    async def _finish(self, result: RunResult, action: Action, trace: TurnTrace) -> RunResult:
        result.answer = action.answer or ""
        result.status = "partial" if result.reason else "done"
        await self._notify(trace)
        return result

    async def _notify(self, trace: TurnTrace) -> None:
        if self.on_turn is not None:
            outcome = self.on_turn(trace)
            if inspect.isawaitable(outcome):
                await outcome

    def _charge(self, reply: Reply) -> None:
        self.budget.charge(reply.prompt_tokens + reply.completion_tokens)

    def _partial(self, result: RunResult, regions: Regions, reason: str) -> RunResult:
        result.answer = regions.state or "(no findings yet)"
        result.status, result.reason = "partial", reason
        return result


def _trace(turn: int, action: Action, prompt: Prompt, reply: Reply, retries: int, seconds: float) -> TurnTrace:
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
