"""The runtime side of recursion: the asker behind `context_ask` and `context_map`.

`tools.recursion` checks targets and bounds fan-out; it calls an `Asker`
to answer one question about one span. `Recursion` is that asker. It
answers at depth `depth` (the root run is depth 0, so the root's asker has
depth 1) in one of two ways:

- below `max_depth`, with a child `Agent` on the same model and context
  store, whose own MCP host serves a context server whose asker is this
  one a level deeper; its task is the question and the span, and its
  Documents listing shows only the target object;
- at `max_depth`, with a leaf: one free-text model call over the span
  (`purpose="leaf"`), or, when the span does not fit the leaf budget, one
  call per chunk and a last call (`purpose="reduce"`) over their answers.

Spending. Every child gets a `runtime.models.ledger.Ledger` under its parent's,
so it spends only what remains above it. The `Agent` checks its ledger
between turns, a leaf before each call; a run out of budget returns its
best partial answer, marked partial with the reason. Model calls below the root go through one shared
`CapacityLimiter`, held only for the call, so nesting cannot deadlock.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import anyio

from loci.memory.context.objects import Target
from loci.memory.context.store import ContextObject, ContextStore
from loci.memory.errors import ToolError
from loci.runtime.host.host import McpHost
from loci.runtime.loop.agent import Agent
from loci.runtime.loop.records import DEFAULT_MAX_DEPTH, RunConfig
from loci.runtime.models.base import Model, Reply, Request
from loci.runtime.models.ledger import Ledger
from loci.runtime.models.wrapper import ModelWrapper
from loci.runtime.prompt.build import TEMPLATE_OVERHEAD, RegionSizes, fit
from loci.runtime.reading.evidence import evidence_json
from loci.servers.context import build_context_server
from loci.tools.context import ContextTools, Scope

__all__ = ["DEFAULT_MAX_DEPTH", "Recursion"]

LEAF_FRAME_TOKENS = 64  # the leaf prompt's own words around the span

LEAF_SYSTEM = (
    "You answer one question from one excerpt of a document. "
    "Answer briefly, from the excerpt only; say so if it does not tell."
)
REDUCE_SYSTEM = "You combine partial answers, each from one part of a document, into one brief answer to the question."


@dataclass(frozen=True)
class _Chunk:
    start: int
    end: int
    text: str


@dataclass
class Recursion:
    """The asker for runs at depth `depth - 1`: answers a question about one span, one level deeper.

    `config` is the child runs' (`RunConfig.for_child`); `ledger` is the parent run's, under which each
    answer opens its own; `leaf_chunk_tokens` overrides the size of the span a leaf reads in one call."""

    model: Model
    contexts: ContextStore
    config: RunConfig = field(default_factory=RunConfig)
    ledger: Ledger = field(default_factory=Ledger)
    depth: int = 1
    leaf_chunk_tokens: int | None = None
    limiter: anyio.CapacityLimiter | None = None

    @property
    def max_depth(self) -> int:
        return self.config.max_depth

    async def __call__(self, question: str, target: Target) -> dict[str, Any]:
        if self.depth > self.max_depth:
            raise ToolError(f"the depth limit is {self.max_depth}: no child may run at depth {self.depth}")
        obj = await self.contexts.check_target(target)
        start = target.start or 1
        span = Target(obj.id, start, target.end if target.end is not None else obj.lines)
        ledger = self.ledger.child(max_tokens=self.config.limits.max_tokens, max_seconds=self.config.limits.max_seconds)
        reason = ledger.exhausted()
        if reason:
            return self._result("", [], reason, turns=0, ledger=ledger)
        if self.depth >= self.max_depth:
            return await self._leaf(question, span, ledger)
        return await self._child(question, span, obj, ledger)

    async def _child(self, question: str, span: Target, obj: ContextObject, ledger: Ledger) -> dict[str, Any]:
        """A child agent over the span, with a context server whose asker is one level deeper."""
        deeper = replace(self, depth=self.depth + 1, ledger=ledger, limiter=self._limiter())
        async with McpHost() as host:
            scope = Scope(span, await self.contexts.last_id())
            tools = ContextTools(self.contexts, deeper, concurrency=self.config.concurrency, scope=scope)
            await host.add("context", build_context_server(tools))
            agent = Agent(_Limited(self.model, self._limiter()), host, self.contexts, self.config, ledger=ledger)
            run = await agent.run(_child_task(question, span, obj), objects=[obj])
        evidence = evidence_json(run.evidence)
        result = self._result(run.answer, evidence, run.reason, turns=len(run.turns), ledger=ledger)
        result["status"] = run.status
        return result

    async def _leaf(self, question: str, span: Target, ledger: Ledger) -> dict[str, Any]:
        """One call over the span; map over chunks then reduce when it does not fit."""
        chunks = await self._chunks(span, self._leaf_size(question))
        answered: list[tuple[_Chunk, str]] = []
        reason = None
        for chunk in chunks:
            reason = ledger.exhausted()
            if reason:
                break
            answered.append((chunk, await self._generate(ledger, _leaf_messages(question, span.id, chunk), "leaf")))
        calls = len(answered)
        if len(chunks) == 1 and answered:
            answer = answered[0][1]
        elif not reason and (reason := ledger.exhausted()) is None:
            answer, calls = (
                await self._generate(ledger, self._reduce_messages(question, span, answered), "reduce"),
                calls + 1,
            )
        else:
            answer = _joined(answered)
        covered = [span] if not reason else [Target(span.id, c.start, c.end) for c, _ in answered]
        evidence = evidence_json(covered)
        return self._result(answer, evidence, reason, turns=calls, ledger=ledger)

    async def _chunks(self, span: Target, size: int) -> list[_Chunk]:
        """The span's text in pieces of at most `size` tokens (a line too long for one continues by tokens)."""
        assert span.start is not None and span.end is not None
        chunks: list[_Chunk] = []
        at, unit = span.start, "lines"
        while True:
            read = await self.contexts.read(
                span.id, at, span.end if unit == "lines" else None, max_tokens=size, unit=unit
            )
            text, end = read.text, read.end_line
            if end > span.end:  # a read by tokens ran past the span: keep its lines only
                text, end = "\n".join(text.split("\n")[: span.end - read.start_line + 1]), span.end
            chunks.append(_Chunk(read.start_line, end, text))
            if not read.truncated or read.next_start is None or end >= span.end and read.next_unit == "lines":
                return chunks
            at, unit = read.next_start, read.next_unit

    async def _generate(self, ledger: Ledger, messages: list[dict[str, str]], purpose: str) -> str:
        async with self._limiter():
            reply: Reply = await self.model.generate(Request(messages, max_tokens=self._sizes().reply, purpose=purpose))
        ledger.charge(reply.prompt_tokens + reply.completion_tokens)
        return reply.text.strip()

    def _reduce_messages(self, question: str, span: Target, answered: list[tuple[_Chunk, str]]) -> list[dict[str, str]]:
        body, _ = fit(_joined(answered), self._leaf_size(question), self.model.count_tokens)
        user = f"Question: {question}\n\nPartial answers from the parts of {span}:\n{body}\n\nAnswer the question."
        return [{"role": "system", "content": REDUCE_SYSTEM}, {"role": "user", "content": user}]

    def _leaf_size(self, question: str) -> int:
        if self.leaf_chunk_tokens is not None:
            return self.leaf_chunk_tokens
        sizes = self._sizes()
        room = sizes.context_window - sizes.reply - TEMPLATE_OVERHEAD - LEAF_FRAME_TOKENS
        return max(32, room - self.model.count_tokens(question))

    def _sizes(self) -> RegionSizes:
        return self.config.sizes_for(self.model.context_window)

    def _limiter(self) -> anyio.CapacityLimiter:
        if self.limiter is None:
            self.limiter = anyio.CapacityLimiter(max(1, self.config.concurrency))
        return self.limiter

    def _result(
        self, answer: str, evidence: list[dict[str, Any]], reason: str | None, *, turns: int, ledger: Ledger
    ) -> dict[str, Any]:
        status = "partial" if reason else "done"
        return {
            "answer": answer,
            "evidence": evidence,
            "status": status,
            "reason": reason,
            "depth": self.depth,
            "turns": turns,
            "tokens": ledger.used,
        }


class _Limited(ModelWrapper):
    """A model whose calls wait for a slot of a shared limiter (held only for the call)."""

    def __init__(self, model: Model, limiter: anyio.CapacityLimiter) -> None:
        super().__init__(model)
        self.limiter = limiter

    async def generate(self, request: Request) -> Reply:
        async with self.limiter:
            return await self.inner.generate(request)


def _child_task(question: str, span: Target, obj: ContextObject) -> str:
    return (
        f"{question}\nAnswer from {span} only: lines {span.start}-{span.end} of {obj.id} ({obj.name}). "
        "Read those lines with context_read, and cite the lines you use as evidence."
    )


def _leaf_messages(question: str, ref: str, chunk: _Chunk) -> list[dict[str, str]]:
    user = f"Excerpt: {ref} lines {chunk.start}-{chunk.end}\n{chunk.text}\n\nQuestion: {question}"
    return [{"role": "system", "content": LEAF_SYSTEM}, {"role": "user", "content": user}]


def _joined(answered: list[tuple[_Chunk, str]]) -> str:
    return "\n".join(f"[lines {chunk.start}-{chunk.end}] {answer}" for chunk, answer in answered)
