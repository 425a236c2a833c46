"""Wiring for one agent session: home, context store, built-in servers, host.

`open_session` is what `loci run`, `loci chat` and the `run_task` MCP tool
share: it opens the SQLite home, binds the context store to the model's
tokenizer, loads the user's files, connects the MCP host to the built-in
servers in-process (and to external ones from an `mcpServers` file), and
yields an `Agent` ready to run. Everything it opened is closed on exit.

One `RunConfig` configures the session's runs: the root agent's and, through
the context server's `context_ask` and `context_map`, those of a `Recursion`
on the session's model, up to `config.max_depth`, at most `config.concurrency`
children at once. The root agent and every child charge one `Ledger` opened
from `config.limits`, so children spend what remains of the run's.

Beside a model that serves calls concurrently (a remote one), the session
also runs a worker for the `note` jobs its runs queue (`runtime.prompt.notes`), so
a fold's extract is rewritten by the model while the run goes on; a local
model's notes wait for a long-lived process's worker (`loci chat`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from memory.context.store import ContextObject, ContextStore
from memory.errors import NotFoundError, UsageError
from memory.runs import Runs
from memory.store import Store
from runtime.agent import Agent, OnTurn
from runtime.background import background_worker
from runtime.experience import Brief, Experience, experience_for, foreground
from runtime.host.host import McpHost
from runtime.ledger import Ledger
from runtime.models.base import Model, is_serial
from runtime.prompt.notes import NOTE_JOB, NoteRefiner
from runtime.recursion import Recursion
from runtime.run import NoteMode, RunConfig, RunResult, TurnTrace
from servers.context import build_context_server
from servers.history import build_history_server
from servers.memory import memory_server_for
from tools.context import ContextTools
from tools.history import HistoryTools

__all__ = ["Session", "check_files", "open_session", "turn_record"]


@dataclass
class Session:
    agent: Agent
    store: Store
    contexts: ContextStore
    host: McpHost
    loaded: list[ContextObject]
    experience: Experience | None = None

    async def run(self, task: str, *, source: str = "run", **agent_kwargs: Any) -> tuple[int, RunResult]:
        """`agent.run(task, ...)`, recorded in the home's `runs` table however it ends.

        The row is written before the run starts; a cancelled run is recorded as
        `cancelled` (shielded, so the cancellation cannot skip it) and an error as
        `failed`, and both propagate. Returns the run's id with its result.
        """
        runs = Runs(self.store)
        run_id = await runs.start(task, model=self.agent.model.name, source=source)
        brief = await self.experience.before(task) if self.experience else Brief(task=task)
        try:
            async with foreground(self.experience):
                result = await self.agent.run(brief.task, **agent_kwargs)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await runs.finish(run_id, status="cancelled", reason="the caller cancelled the run")
            raise
        except Exception as exc:
            await runs.finish(run_id, status="failed", reason=f"{type(exc).__name__}: {exc}")
            raise
        await runs.finish(
            run_id,
            status=result.status,
            answer=result.answer,
            reason=result.reason,
            evidence=[{"id": c.id, "start": c.start, "end": c.end} for c in result.evidence],
            turns=[turn_record(trace) for trace in result.turns],
            tokens=result.tokens,
        )
        if self.experience:
            await self.experience.after(run_id, brief)
        return run_id, result


def turn_record(trace: TurnTrace) -> dict[str, Any]:
    """One turn of a run's trace, as stored in its run record."""
    action = trace.action
    record: dict[str, Any] = {"turn": trace.turn, "state": action.state}
    if action.is_answer:
        record["answer"] = action.answer
    else:
        record.update(tool=action.tool, arguments=action.arguments, observation_id=trace.observation_id)
        record["result_tokens"] = trace.result_tokens
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
        paths.append(path)
    return paths


@asynccontextmanager
async def open_session(
    model: Model,
    db: str | Path,
    config: RunConfig | None = None,
    *,
    files: Sequence[str | Path] = (),
    on_turn: OnTurn | None = None,
) -> AsyncIterator[Session]:
    config = config or RunConfig()
    paths = check_files(files)
    async with await Store.open(db) as store, McpHost() as host:
        contexts = ContextStore(store, model.count_tokens)
        loaded = [await contexts.add_file(path) for path in paths]
        ledger = Ledger(max_tokens=config.limits.max_tokens, max_seconds=config.limits.max_seconds)
        recursion = Recursion(model, contexts, config.for_child(), ledger)
        await host.add(
            "context", build_context_server(ContextTools(contexts, recursion, concurrency=config.concurrency))
        )
        if "memory" in config.tool_sets:
            await host.add("memory", memory_server_for(store))
        if config.mcp_config:
            await host.add_config(config.mcp_config)
        agent = Agent(model, host, contexts, config, ledger=ledger, on_turn=on_turn)
        if "history" in config.tool_sets:
            await host.add("history", build_history_server(HistoryTools(agent.window)))
        session = Session(agent, store, contexts, host, loaded, experience_for(store, contexts, model, agent))
        if is_serial(model) or config.note_mode is not NoteMode.BACKGROUND or session.experience is None:
            yield session
            return
        # The model serves calls concurrently: the notes this session's runs fold are rewritten as they run.
        evolution = session.experience.evolution
        refiner = NoteRefiner(model, contexts, evolution.jobs, evolution.foreground)
        after = await evolution.jobs.last_id()
        async with background_worker(evolution.jobs, {NOTE_JOB: refiner}, after=after) as worker:
            agent.notes.wake = worker.wake
            yield session
