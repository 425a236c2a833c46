"""The turn loop: decide the next step, delegate everything else.

Before the first turn, `_plan` decides how the run shows its documents
(whole when they fit the budgets, else by navigation: `runtime.prompt.fit`) and
which tools the model reads (`runtime.prompt.catalogue`). Then each turn is a short
pipeline, one method a layer:

    _decide   budget the prompt, ask the model, validate   (runtime.decide)
    _dispatch call the tool through the MCP host           (runtime.host.host)
    _record   store the observation and the turn           (memory.context.store)

`_decide` returns one of three typed outcomes (`runtime.turn`): an answer
with checked evidence (finish), a tool call (dispatch, record, go on), or
the budget spent (finish with the best partial answer: the working state).
A call identical to an earlier one is not dispatched again (`runtime.guard`);
a run stuck repeating itself, and the last turn the limits allow, accept only
an answer, so a run always ends with one. When documents must be navigated,
the first turn accepts only a tool call, so the model looks before it
answers. Every model call is charged to the run's `Ledger`, its own or shared
with the runs above it (`runtime.recursion`). Notes that keep the window
within its size are written by `runtime.prompt.notes`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence

from memory.context.store import ContextObject, ContextStore
from memory.errors import UsageError
from runtime.action import Action
from runtime.decide import Decider
from runtime.guard import RepeatGuard
from runtime.host.host import McpHost, ToolResult
from runtime.models.base import Model
from runtime.models.ledger import Ledger
from runtime.prompt.build import fit
from runtime.prompt.catalogue import FIRST_LOOK, choose_tools
from runtime.prompt.fit import NAVIGATE, plan_documents
from runtime.prompt.notes import NoteQueue, NoteWriter
from runtime.prompt.regions import LISTED_OBJECTS, Observation, Regions, system_text
from runtime.prompt.window import TurnLine, Window
from runtime.run import RunConfig, RunPlan, RunResult, TurnTrace
from runtime.turn import BudgetSpent, FinalAnswer, NextStep, ToolCall, TurnRules

__all__ = ["Agent", "OnTurn"]

OnTurn = Callable[[TurnTrace], Awaitable[None] | None]
TASK_FRAME_TOKENS = 24  # "Task:", "Documents:" and the region's separators


class Agent:
    """Runs tasks on one model, with tools from one MCP host, over one context store."""

    def __init__(
        self,
        model: Model,
        host: McpHost,
        contexts: ContextStore,
        config: RunConfig | None = None,
        *,
        ledger: Ledger | None = None,
        on_turn: OnTurn | None = None,
        note_queue: NoteQueue | None = None,
    ) -> None:
        self.model, self.host, self.contexts = model, host, contexts
        self.config = config or RunConfig()
        self.limits = self.config.limits
        self.sizes = self.config.sizes_for(model.context_window)
        # A ledger handed in is shared with other runs; otherwise the run's own limits open one.
        self.ledger = ledger or Ledger(max_tokens=self.limits.max_tokens, max_seconds=self.limits.max_seconds)
        self.on_turn = on_turn
        self.window = Window(contexts, model.count_tokens)
        self.notes = NoteWriter(
            model,
            self.window,
            self.sizes,
            self.config.note_mode,
            system_text(host.tools),
            self.ledger,
            queue=note_queue,  # where the folds' rewrites go, when a worker will run them
        )
        self.plan: RunPlan | None = None  # the last run's, set before its first turn
        self.first_look = False
        self.run_sizes = self.sizes  # the last run's region sizes (showing documents whole re-splits them)

    async def run(
        self,
        task: str,
        *,
        state: str = "",
        keep_window: bool = False,
        objects: list[ContextObject] | None = None,
        tool_choice: Sequence[str] = (),
    ) -> RunResult:
        """Run `task` to an answer. `state` seeds the working state; `keep_window` continues the last run's window;
        `objects`, when given, replaces the loaded documents in the task's listing; `tool_choice[i]`, when
        given, is the tool turn i+1 must call (as OpenAI's `tool_choice` forces one function)."""
        unknown = [name for name in tool_choice if name not in {tool.name for tool in self.host.tools}]
        if unknown:
            raise UsageError(f"tool_choice names unknown tools: {', '.join(unknown)}")
        objects = await self.contexts.list(["doc"]) if objects is None else objects
        self.ledger.start()
        if not keep_window:
            self.window.items = []
        regions, decider = await self._plan(task, objects, state)
        result, guard = RunResult(answer="", status="partial", plan=self.plan), RepeatGuard()
        for turn in range(1, self.limits.max_turns + 1):
            rules = self._rules(turn, regions, tool_choice, guard)
            look = turn == 1 and self.first_look and not tool_choice
            step = (
                self._first_look(task, regions.objects)
                if look
                else await self._decide(regions, decider, rules, turn, result)
            )
            if isinstance(step, BudgetSpent):
                return self._partial(result, regions, step.reason)
            step.trace.plan = self.plan if turn == 1 else None
            result.turns.append(step.trace)
            regions.state = step.trace.action.state
            if isinstance(step, FinalAnswer):
                return await self._finish(result, step)
            action = step.trace.action
            earlier = guard.earlier(action)
            outcome = (
                ToolResult(guard.message(action, earlier), is_error=True)
                if earlier
                else await self._dispatch(action.tool or "", action.arguments)
            )
            step.trace.repeated = earlier.observation_id if earlier else None
            await self._record(regions, step.trace, outcome)
            guard.remember(action, turn, step.trace.observation_id or "")
            await self._notify(step.trace)
        return self._partial(result, regions, "the turn limit was reached")  # pragma: no cover

    async def _plan(self, task: str, objects: list[ContextObject], state: str) -> tuple[Regions, Decider]:
        """Show the documents whole or navigate them; pick the catalogue; size the regions for this run."""
        count = self.model.count_tokens
        shown = await plan_documents(self.contexts, objects, self.sizes, count(task) + TASK_FRAME_TOKENS, count)
        catalogue = choose_tools(
            self.host.tools, parameters=self.model.parameters, mode=shown.mode, pinned=self.config.tools is not None
        )
        self.plan = RunPlan(shown.mode, shown.describe(), [t.name for t in catalogue.tools], catalogue.reason)
        self.first_look = catalogue.first_look and self.limits.max_turns > 1
        regions = Regions(
            task,
            catalogue.tools,
            objects,
            self.window,
            state=state,
            documents=shown.text,
            style=self.config.answer_style,
        )
        self.run_sizes = shown.sizes
        self.notes.sizes, self.notes.system = shown.sizes, system_text(catalogue.tools, self.config.answer_style)
        ids = [obj.id for obj in objects]
        return regions, Decider(
            self.model, self.contexts, shown.sizes, self.limits, self.ledger, self.config.answer_style, ids
        )

    def _rules(self, turn: int, regions: Regions, tool_choice: Sequence[str], guard: RepeatGuard) -> TurnRules:
        """The last turn, or a stuck run, only answers; a forced look, or a first look at unseen documents,
        only calls tools."""
        if turn == self.limits.max_turns or guard.stuck:
            return TurnRules(regions.tools, allow_tools=False, allow_answer=True)
        if turn <= len(tool_choice):
            forced = [tool for tool in self.host.tools if tool.name == tool_choice[turn - 1]]
            return TurnRules(forced, allow_tools=True, allow_answer=False)
        look = turn == 1 and bool(regions.objects) and self.plan is not None and self.plan.mode == NAVIGATE
        return TurnRules(regions.tools, allow_tools=True, allow_answer=not look)

    @staticmethod
    def _first_look(task: str, objects: list[ContextObject]) -> ToolCall:
        """The first search, made for a small model from the task's words, in the run's documents when few."""
        arguments: dict = {"query": task} | ({"ids": [o.id for o in objects]} if len(objects) <= LISTED_OBJECTS else {})
        action = Action(state=f"Searching the documents for: {task}", tool=FIRST_LOOK, arguments=arguments)
        return ToolCall(TurnTrace(1, action, {}, 0, 0, 0))

    async def _decide(
        self, regions: Regions, decider: Decider, rules: TurnRules, turn: int, result: RunResult
    ) -> NextStep:
        if reason := self.ledger.exhausted():
            return BudgetSpent(reason)
        await self.notes.compact()
        return await decider.decide(regions, turn, rules, result)

    async def _dispatch(self, tool: str, arguments: dict) -> ToolResult:
        return await self.host.call(tool, arguments)

    async def _record(self, regions: Regions, trace: TurnTrace, result: ToolResult) -> None:
        """Store the observation and the turn as context objects; show the head of a large result."""
        obj = await self.contexts.add_text(
            "obs", f"turn {trace.turn} {trace.action.tool}", result.text, {"error": result.is_error}
        )
        trace.observation_id, trace.result_tokens = obj.id, obj.tokens  # counted once, as it was stored
        head, cut = fit(result.text, self.run_sizes.observation - 60, self.model.count_tokens)
        regions.observation = Observation(
            obj.id, trace.action.tool or "", head, trace.result_tokens, cut, result.is_error
        )
        line = TurnLine(
            trace.turn, trace.action.tool or "", trace.action.arguments, obj.id, trace.result_tokens, result.is_error
        )
        turn_obj = await self.contexts.add_text(
            "turn", f"turn {trace.turn}", line.render(preview=result.text), {"observation": obj.id}
        )
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
