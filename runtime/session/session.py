"""Wiring for one agent session: home, context store, built-in servers, host.

`open_session` is what `loci run`, `loci chat`, `loci digest` and the
`run_task` and `digest` MCP tools share: it opens the home (a SQLite file or a
PostgreSQL database, memory/engines/select.py), binds the
context store to the model's tokenizer, loads the user's files, connects the
MCP host to the built-in servers in-process (and to external ones from an
`mcpServers` file), and yields a `Session` whose `Agent` is ready to run.
Everything it opened is closed on exit.

One `RunConfig` configures the session's runs: the root agent's and, through
the context server's `context_ask` and `context_map`, those of a `Recursion`
on the session's model, up to `config.max_depth`, at most `config.concurrency`
children at once. The root agent and every child charge one `Ledger` opened
from `config.limits`, so children spend what remains of the run's.

Every collaborator is built here, before what uses it: the memory side
(`Experience`, with its evaluator and whether runs leave episodes), then the
background worker `runtime.session.background.session_worker` decides on (`background`:
the session's own for note rewrites beside a remote model, every job kind for
`loci chat`, none for a caller that runs the jobs itself), then the `Agent`,
given the queue its folds' rewrites go to. `db` is a path, a connection string, or a
store the caller already holds, which the session uses and leaves open, so no path
opens a second writer on one home.

The session hears every turn its agent reports (`TurnLog`, which passes each on to the caller's
`on_turn`), so a run cancelled midway is recorded with the turns it made, as progress reported them.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from loci.memory.context.store import ContextObject, ContextStore
from loci.memory.engines.base import Engine
from loci.memory.engines.select import use_engine
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph
from loci.memory.imports.transcript import conversation_document
from loci.memory.projects import DEFAULT_PROJECT
from loci.memory.records.runs import Runs
from loci.memory.regular import describe_mode
from loci.runtime.host.host import McpHost
from loci.runtime.loop.agent import Agent, OnTurn
from loci.runtime.loop.records import RunConfig, RunResult, TurnTrace
from loci.runtime.loop.recursion import Recursion
from loci.runtime.models.base import Model
from loci.runtime.models.ledger import Ledger
from loci.runtime.reading.evidence import evidence_json
from loci.runtime.session.background import Background, serving, session_worker
from loci.runtime.session.experience import Brief, Evaluator, Experience, language_for
from loci.servers.context import build_context_server
from loci.servers.history import build_history_server
from loci.servers.memory import memory_server_for
from loci.tools.context import ContextTools
from loci.tools.history import HistoryTools

__all__ = ["Session", "TurnLog", "Used", "Work", "check_files", "open_session", "turn_record"]

Work = Callable[[Brief], Awaitable[RunResult]]
Used = Callable[[RunResult], Sequence[int]]


class TurnLog:
    """The turns the agent reported in the current run, each passed on to the caller's `on_turn`."""

    def __init__(self, on_turn: OnTurn | None = None) -> None:
        self.on_turn = on_turn
        self.traces: list[TurnTrace] = []

    async def __call__(self, trace: TurnTrace) -> None:
        self.traces.append(trace)
        if self.on_turn is not None:
            outcome = self.on_turn(trace)
            if inspect.isawaitable(outcome):
                await outcome


@dataclass
class Session:
    agent: Agent
    store: Engine
    contexts: ContextStore
    host: McpHost
    loaded: list[ContextObject]
    experience: Experience
    runs: Runs
    turns: TurnLog = field(default_factory=TurnLog)  # the agent's `on_turn`: the current run's turns

    @property
    def graph(self) -> Graph:
        """The memory graph of the session's project (its experience's)."""
        return self.experience.evolution.graph

    async def run(
        self,
        task: str,
        *,
        source: str = "run",
        work: Work | None = None,
        used: Used | None = None,
        **agent_kwargs: Any,
    ) -> tuple[int, RunResult]:
        """`agent.run(task, ...)`, or `work(brief)`, recorded in the home's `runs` table however it ends.

        The row is written before the run starts; a cancelled run is recorded as
        `cancelled` (shielded, so the cancellation cannot skip it) and an error as
        `failed`, and both propagate, each with the turns it made. A run that ends with an answer leaves its
        episode. `work` is a job that answers in its own way (a digest's `stream`
        or `direct` strategy): it gets the brief and gives back a `RunResult`.
        `used` names the memories the result rests on that its turns do not (a
        run that read recalled memories as a document: runtime/session/sources.py);
        its episode records them as used.
        Returns the run's id with its result.
        """
        runs = self.runs
        self.turns.traces.clear()
        run_id = await runs.start(task, model=self.agent.model.name, source=source)
        brief = await self.experience.before(task)
        try:
            async with self.experience.evolution.foreground.turn():
                ran = work(brief) if work else self.agent.run(brief.question, notes=brief.text, **agent_kwargs)
                result = await ran
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await runs.finish(
                    run_id, status="cancelled", reason="the caller cancelled the run", **self._made_so_far()
                )
            raise
        except Exception as exc:
            await runs.finish(run_id, status="failed", reason=f"{type(exc).__name__}: {exc}", **self._made_so_far())
            raise
        record = await runs.finish(
            run_id,
            status=result.status,
            answer=result.answer,
            reason=result.reason,
            evidence=evidence_json(result.evidence),
            turns=[turn_record(trace) for trace in result.turns],
            tokens=result.tokens,
        )
        await self.experience.after(record, brief, used=used(result) if used else ())
        return run_id, result

    def _made_so_far(self) -> dict[str, Any]:
        """The turns and tokens of a run that did not finish, as the agent reported them."""
        return {"turns": [turn_record(trace) for trace in self.turns.traces], "tokens": self.agent.ledger.used}


def turn_record(trace: TurnTrace) -> dict[str, Any]:
    """One turn of a run's trace, as stored in its run record."""
    action = trace.action
    record: dict[str, Any] = {"turn": trace.turn, "state": action.state}
    if action.is_answer:
        record["answer"] = action.answer
    else:
        record.update(tool=action.tool, arguments=action.arguments, observation_id=trace.observation_id)
        record.update(result_tokens=trace.result_tokens, error=trace.error, refs=list(trace.refs))
    record["retries"] = trace.retries
    # What the prompt held, by region, and how much of it the model evaluated rather than reused from its cache.
    record.update(
        prompt_tokens=dict(trace.prompt_tokens),
        evaluated_tokens=trace.evaluated_tokens,
        reused_tokens=trace.reused_tokens,
    )
    return record


def check_files(files: Sequence[str | Path]) -> list[Path]:
    """Refuse a missing file or a directory before anything slow (a model load) starts."""
    paths = []
    for name in files:
        path = Path(name)
        if not path.exists():
            raise NotFoundError(f"--file {name}: no such file")
        if path.is_dir():
            raise UsageError(f"--file {name} is a directory; pass its files")
        if what := describe_mode(path.stat().st_mode):
            raise UsageError(f"--file {name} is {what}, not a regular file")
        paths.append(path)
    return paths


@asynccontextmanager
async def open_session(
    model: Model,
    db: str | Path | Engine,
    config: RunConfig | None = None,
    *,
    files: Sequence[str | Path] = (),
    on_turn: OnTurn | None = None,
    background: Background = Background.OWN,
    episodes: bool = True,
    evaluator: Evaluator | None = None,
    project: str = DEFAULT_PROJECT,
) -> AsyncIterator[Session]:
    """A session on `model` over one project of the home `db` (a path, a connection string, or a store the
    caller holds and keeps open): its documents, memories, runs and jobs are that project's."""
    config = config or RunConfig()
    paths = check_files(files)
    async with use_engine(db) as store, McpHost() as host:
        contexts = ContextStore(store, model.count_tokens, conversations=conversation_document, project=project)
        loaded = [await contexts.add_file(path) for path in paths]
        ledger = Ledger(max_tokens=config.limits.max_tokens, max_seconds=config.limits.max_seconds)
        recursion = Recursion(model, contexts, config.for_child(), ledger)
        await host.add(
            "context", build_context_server(ContextTools(contexts, recursion, concurrency=config.concurrency))
        )
        if "memory" in config.tool_sets:
            await host.add("memory", memory_server_for(store, project=project))
        if config.mcp_config:
            await host.add_config(config.mcp_config)
        evolution = Evolution(Graph(store, project=project), language=language_for(model))
        chosen = await session_worker(background, model, config.note_mode, contexts, evolution)
        task_tokens = config.sizes_for(model.context_window).task
        experience = Experience(
            evolution,
            model.count_tokens,
            task_tokens,
            episodes=episodes,
            evaluator=evaluator,
            worker=chosen.worker,
        )
        turns = TurnLog(on_turn)
        agent = Agent(model, host, contexts, config, ledger=ledger, on_turn=turns, note_queue=chosen.notes)
        if "history" in config.tool_sets:
            await host.add("history", build_history_server(HistoryTools(agent.window)))
        session = Session(agent, store, contexts, host, loaded, experience, Runs(store, project=project), turns)
        async with serving(chosen.worker) if chosen.worker is not None else nullcontext():
            yield session
