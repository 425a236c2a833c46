"""The turn loop: decide the next step, delegate everything else.

The `Planner` (`runtime.loop.plan`) sets up each run's own `RunState`: how it shows
its documents, which tools the model reads, and whether it reads
(`runtime.loop.state`: a small model navigating answers from the runtime's look).
Each turn is then a short pipeline:

    _decide   budget the prompt, ask the model, validate   (runtime.loop.decide)
    _call     call the tool through the MCP host           (runtime.host.host)
    record    store the observation and the turn           (runtime.loop.state.record_turn)

`_decide` returns a typed outcome (`runtime.loop.turn`): an answer with checked
evidence, a tool call, or the budget spent (the working state as a partial
answer). A repeated search reads the next best hit, another repeated call is
refused (`runtime.loop.guard`); a stuck run and the last turn only answer; the
first turn on navigated documents only looks. Every model call is charged to
the run's `Ledger` (`runtime.loop.recursion` shares it), the run's one token
account: `RunResult.tokens` is read from it when the run ends, as a failed or
cancelled run's record reads it (`runtime.session.session`); `runtime.prompt.notes`
keeps the window within its size.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence

from loci.memory.context.store import ContextObject, ContextStore
from loci.memory.errors import UsageError
from loci.runtime.host.host import McpHost, ToolResult
from loci.runtime.loop.plan import Planner
from loci.runtime.loop.records import RunConfig, RunResult, TurnTrace
from loci.runtime.loop.state import RunState, look_turn, next_hit, record_turn
from loci.runtime.loop.turn import BudgetSpent, FinalAnswer, NextStep, TurnRules
from loci.runtime.models.base import Model
from loci.runtime.models.ledger import Ledger
from loci.runtime.prompt.fit import NAVIGATE
from loci.runtime.prompt.notes import NoteQueue, NoteWriter
from loci.runtime.prompt.regions import EXAMPLE_TEXTS, Regions, system_text, unexampled
from loci.runtime.prompt.window import Window
from loci.runtime.reading.answers import clean_answer

__all__ = ["Agent", "OnTurn"]

OnTurn = Callable[[TurnTrace], Awaitable[None] | None]


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
        self.planner = Planner(model, contexts, host, self.config, self.sizes, self.window, self.ledger)

    async def run(
        self,
        task: str,
        *,
        notes: str = "",
        state: str = "",
        keep_window: bool = False,
        objects: list[ContextObject] | None = None,
        tool_choice: Sequence[str] = (),
    ) -> RunResult:
        """Run `task` to an answer. `notes` are the lines recalled from memory for it (quoted: shown under the
        task, never searched for); `state` seeds the working state; `keep_window` continues the last run's window;
        `objects`, when given, replaces the loaded documents in the task's listing; `tool_choice[i]`, when
        given, is the tool turn i+1 must call (as OpenAI's `tool_choice` forces one function)."""
        unknown = [name for name in tool_choice if name not in {tool.name for tool in self.host.tools}]
        if unknown:
            raise UsageError(f"tool_choice names unknown tools: {', '.join(unknown)}")
        objects = await self.contexts.list(["doc"]) if objects is None else objects
        self.ledger.start()
        if not keep_window:
            self.window.clear()
        run = await self.planner.plan(task, objects, state, notes=notes, reads=not tool_choice)
        self.notes.begin_run(run.sizes, system_text(run.regions.tools, self.config.answer_style))
        result = RunResult(answer="", status="partial", plan=run.plan, sizes=run.sizes)
        first = 2 if run.looks else 1
        if run.looks:
            await self._look(run, result)
        for turn in range(first, self.limits.max_turns + 1):
            step = await self._decide(run, self._rules(turn, run, tool_choice), turn)
            if isinstance(step, BudgetSpent):
                return self._partial(result, run.regions, step.reason)
            step.trace.plan = run.plan if turn == 1 else None
            result.turns.append(step.trace)
            run.regions.state = step.trace.action.state
            if isinstance(step, FinalAnswer):
                return await self._finish(result, step)
            await self._call(run, step.trace, turn)
        return self._partial(result, run.regions, "the turn limit was reached")  # pragma: no cover

    def _rules(self, turn: int, run: RunState, tool_choice: Sequence[str]) -> TurnRules:
        """The last turn, a reading run or a stuck run only answers; a forced look, or a first look at unseen
        documents, only calls tools."""
        tools = run.regions.tools
        if turn == self.limits.max_turns or run.guard.stuck or run.reads:
            return TurnRules(tools, allow_tools=False, allow_answer=True)
        if turn <= len(tool_choice):
            forced = [tool for tool in self.host.tools if tool.name == tool_choice[turn - 1]]
            return TurnRules(forced, allow_tools=True, allow_answer=False)
        look = turn == 1 and bool(run.regions.objects) and run.plan.mode == NAVIGATE
        return TurnRules(tools, allow_tools=True, allow_answer=not look)

    async def _look(self, run: RunState, result: RunResult) -> None:
        """Turn 1 of a reading run: the runtime's search, its lines shown whole as the run's documents."""
        trace = await look_turn(self.contexts, run, run.regions.task, self.model.count_tokens)
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
        if outcome is None and isinstance(query := action.arguments.get("query"), str):
            action.arguments["query"] = unexampled(query, run.regions.question)  # never the prompt's example
        outcome = outcome or await self.host.call(action.tool or "", action.arguments)
        await record_turn(self.contexts, self.window, run, trace, outcome, self.model.count_tokens)
        run.guard.remember(action, turn, trace.observation_id or "")
        await self._notify(trace)

    async def _decide(self, run: RunState, rules: TurnRules, turn: int) -> NextStep:
        if reason := self.ledger.exhausted():
            return BudgetSpent(reason)
        await self.notes.compact()
        return await run.decider.decide(run.regions, turn, rules)

    async def _finish(self, result: RunResult, step: FinalAnswer) -> RunResult:
        result.answer = step.trace.action.answer or ""
        result.evidence, result.reason = step.evidence, step.reason
        result.tokens = self.ledger.used
        result.status = "partial" if result.reason else "done"
        await self._notify(step.trace)
        return result

    async def _notify(self, trace: TurnTrace) -> None:
        if self.on_turn is not None:
            outcome = self.on_turn(trace)
            if inspect.isawaitable(outcome):
                await outcome

    def _partial(self, result: RunResult, regions: Regions, reason: str) -> RunResult:
        # the working state, unless it is the prompt's own example
        result.answer = clean_answer(regions.state, frame="\n".join(EXAMPLE_TEXTS), material="") or "(no findings yet)"
        result.status, result.reason = "partial", reason
        result.tokens = self.ledger.used
        return result
