"""The turn loop: decide the next step, delegate everything else.

Before the first turn, `_plan` decides how the run shows its documents
(whole when they fit the budgets, else by navigation: `runtime.prompt.fit`),
which tools the model reads (`runtime.prompt.catalogue`), and whether the
run reads (`runtime.reading`: a small model navigating gets the runtime's
first look, the best lines whole, and answers from them). What the run
decides is kept in its own `RunState`, not on the agent. Then each turn is a
short pipeline, one method a layer:

    _decide   budget the prompt, ask the model, validate   (runtime.decide)
    _call     call the tool through the MCP host           (runtime.host.host)
    _record   store the observation and the turn           (memory.context.store)

`_decide` returns one of three typed outcomes (`runtime.turn`): an answer
with checked evidence (finish), a tool call (dispatch, record, go on), or
the budget spent (finish with the best partial answer: the working state).
A search identical to an earlier one is answered by reading the next best
hit, any other repeated call by saying it was run (`runtime.guard`); a run
stuck repeating itself, and the last turn the limits allow, accept only an
answer, so a run always ends with one. When documents must be navigated,
the first turn accepts only a tool call, so the model looks before it
answers. Every model call is charged to the run's `Ledger`, its own or
shared with the runs above it (`runtime.recursion`). Notes that keep the
window within its size are written by `runtime.prompt.notes`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence

from memory.context.store import ContextObject, ContextStore
from memory.errors import UsageError
from runtime.decide import Decider
from runtime.host.host import McpHost, ToolResult
from runtime.ledger import Ledger
from runtime.models.base import Model
from runtime.prompt.build import fit
from runtime.prompt.catalogue import choose_tools
from runtime.prompt.fit import NAVIGATE, plan_documents
from runtime.prompt.notes import NoteWriter
from runtime.prompt.regions import Observation, Regions, system_text
from runtime.prompt.window import TurnLine, Window
from runtime.reading import RunState, first_look, next_hit, reading_sizes
from runtime.run import RunConfig, RunPlan, RunResult, TurnTrace
from runtime.turn import BudgetSpent, FinalAnswer, NextStep, TurnRules

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
            model, self.window, self.sizes, self.config.note_mode, system_text(host.tools), self.ledger
        )

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
        run = await self._plan(task, objects, state, reads=not tool_choice)
        result = RunResult(answer="", status="partial", plan=run.plan)
        first = 2 if run.reads else 1
        if run.reads:
            await self._look(task, run, result)
        for turn in range(first, self.limits.max_turns + 1):
            step = await self._decide(run, self._rules(turn, run, tool_choice), turn, result)
            if isinstance(step, BudgetSpent):
                return self._partial(result, run.regions, step.reason)
            step.trace.plan = run.plan if turn == 1 else None
            result.turns.append(step.trace)
            run.regions.state = step.trace.action.state
            if isinstance(step, FinalAnswer):
                return await self._finish(result, step)
            await self._call(run, step.trace, turn)
        return self._partial(result, run.regions, "the turn limit was reached")  # pragma: no cover

    async def _plan(self, task: str, objects: list[ContextObject], state: str, *, reads: bool) -> RunState:
        """Show the documents whole or navigate them; pick the catalogue; size the regions for this run.
        A small model navigating reads instead (`runtime.reading`): the runtime looks, the model answers."""
        count = self.model.count_tokens
        shown = await plan_documents(self.contexts, objects, self.sizes, count(task) + TASK_FRAME_TOKENS, count)
        catalogue = choose_tools(
            self.host.tools, parameters=self.model.parameters, mode=shown.mode, pinned=self.config.tools is not None
        )
        reads = reads and catalogue.first_look and self.limits.look_first and self.limits.max_turns > 1
        tools = [] if reads else catalogue.tools
        reason = catalogue.reason.replace("first search by the runtime", "retrieve then read") if reads else ""
        plan = RunPlan(shown.mode, shown.describe(), [t.name for t in tools], reason or catalogue.reason)
        sizes = reading_sizes(shown.sizes) if reads else shown.sizes
        style = self.config.answer_style
        regions = Regions(
            task, tools, objects, self.window, state=state, documents=shown.text, style=style, reading=reads
        )
        self.notes.sizes, self.notes.system = sizes, system_text(tools, style)
        ids = [obj.id for obj in objects]
        decider = Decider(self.model, self.contexts, sizes, self.limits, self.ledger, style, ids)
        return RunState(plan, sizes, regions, decider, reads=reads)

    def _rules(self, turn: int, run: RunState, tool_choice: Sequence[str]) -> TurnRules:
        """The last turn, a reading run or a stuck run only answers; a forced look, or a first look at unseen
        documents, only calls tools."""
        tools = run.regions.tools
        if turn == self.limits.max_turns or run.guard.stuck or run.reads:
            return TurnRules(tools, allow_tools=False, allow_answer=True)
        if turn <= len(tool_choice):
            forced = [tool for tool in self.host.tools if tool.name == tool_choice[turn - 1]]
            return TurnRules(forced, allow_tools=True, allow_answer=False)
        look = turn == 1 and self.limits.look_first and bool(run.regions.objects) and run.plan.mode == NAVIGATE
        return TurnRules(tools, allow_tools=True, allow_answer=not look)

    async def _look(self, task: str, run: RunState, result: RunResult) -> None:
        """Turn 1 of a reading run: the runtime's search, its lines shown whole as the run's documents."""
        count = self.model.count_tokens
        budget = run.sizes.task - count(task) - TASK_FRAME_TOKENS
        ids = [obj.id for obj in run.regions.objects]
        action, text = await first_look(self.contexts, task, ids, budget, count, run.looked)
        trace = TurnTrace(1, action, {}, 0, 0, 0, plan=run.plan)
        obj = await self.contexts.add_text("obs", f"turn 1 {action.tool}", text, {"error": False})
        trace.observation_id, trace.result_tokens = obj.id, obj.tokens
        run.regions.documents = text
        result.turns.append(trace)
        await self._notify(trace)

    async def _call(self, run: RunState, trace: TurnTrace, turn: int) -> None:
        """Dispatch a tool call, or for a repeat, read the next best hit (else say it was already run)."""
        action = trace.action
        earlier = run.guard.earlier(action)
        outcome = None
        if earlier:
            count, room = self.model.count_tokens, run.sizes.observation - 60
            outcome = await next_hit(self.contexts, action, earlier, run.looked, room, count)
            outcome = outcome or ToolResult(run.guard.message(action, earlier), is_error=True)
        trace.repeated = earlier.observation_id if earlier else None
        outcome = outcome or await self._dispatch(action.tool or "", action.arguments)
        await self._record(run, trace, outcome)
        run.guard.remember(action, turn, trace.observation_id or "")
        await self._notify(trace)

    async def _decide(self, run: RunState, rules: TurnRules, turn: int, result: RunResult) -> NextStep:
        if reason := self.ledger.exhausted():
            return BudgetSpent(reason)
        await self.notes.compact()
        return await run.decider.decide(run.regions, turn, rules, result)

    async def _dispatch(self, tool: str, arguments: dict) -> ToolResult:
        return await self.host.call(tool, arguments)

    async def _record(self, run: RunState, trace: TurnTrace, result: ToolResult) -> None:
        """Store the observation and the turn as context objects; show the head of a large result."""
        obj = await self.contexts.add_text(
            "obs", f"turn {trace.turn} {trace.action.tool}", result.text, {"error": result.is_error}
        )
        trace.observation_id, trace.result_tokens = obj.id, obj.tokens  # counted once, as it was stored
        head, cut = fit(result.text, run.sizes.observation - 60, self.model.count_tokens)
        run.regions.observation = Observation(
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
