"""What a digest job is allowed: chunk and memory sizes checked against the window.

A `stream` call holds the instructions, the question, the memory (M), the
chunk (N) and the rewritten memory (M again, the reply), so N + 2M plus the
fixed text must fit the model's window. `Settings.for_model` checks that
before a job exists, and picks defaults that fit when the sizes are not
given: M an eighth of the window (at most 1,024), N what remains (at most
5,000, MemAgent's chunk).

`MeteredModel` wraps the job's model to count its calls and the wall time
spent inside them, which is how a job reports `model_calls` and the model
overhead benchmark tells the model's time from the runtime's.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from loci.memory.errors import UsageError
from loci.runtime.digest.stream import update_instructions
from loci.runtime.models.base import Model, Reply, Request
from loci.runtime.models.wrapper import ModelWrapper
from loci.runtime.prompt.build import TEMPLATE_OVERHEAD

__all__ = ["MIN_CHUNK", "MeteredModel", "Progress", "Settings"]

MIN_CHUNK = 64
MIN_MEMORY = 32
DEFAULT_CHUNK = 5_000
MAX_DEFAULT_MEMORY = 1_024
HEADER_TOKENS = 48  # "Question:", "Memory:", the chunk's heading


@dataclass(frozen=True)
class Settings:
    chunk_tokens: int
    memory_tokens: int
    max_turns: int = 8

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def for_model(
        cls,
        model: Model,
        question: str,
        *,
        chunk_tokens: int | None = None,
        memory_tokens: int | None = None,
        max_turns: int = 8,
    ) -> Settings:
        """Sizes that fit `model`'s window; a `UsageError` that says what fits when the given ones do not."""
        window = model.context_window
        if max_turns < 1:
            raise UsageError(f"--max-turns must be at least 1 (got {max_turns})")
        if memory_tokens is not None and memory_tokens < MIN_MEMORY:
            raise UsageError(f"--memory-tokens must be at least {MIN_MEMORY} (got {memory_tokens})")
        if memory_tokens is not None and memory_tokens >= window:
            raise UsageError(f"--memory-tokens {memory_tokens} is over the model's {window:,}-token window")
        if chunk_tokens is not None and chunk_tokens < MIN_CHUNK:
            raise UsageError(f"--chunk-tokens must be at least {MIN_CHUNK} (got {chunk_tokens})")
        if chunk_tokens is not None and chunk_tokens > window:
            raise UsageError(f"--chunk-tokens {chunk_tokens} is larger than the model's {window:,}-token window")
        memory = memory_tokens or max(MIN_MEMORY, min(MAX_DEFAULT_MEMORY, window // 8))
        fixed = model.count_tokens(update_instructions(memory) + " " + question) + HEADER_TOKENS + TEMPLATE_OVERHEAD
        room = window - 2 * memory - fixed
        if room < MIN_CHUNK:
            raise UsageError(
                f"--memory-tokens {memory} leaves no room for a chunk in the {window:,}-token window "
                f"(the memory and its rewrite take {2 * memory:,}, the question and instructions {fixed:,}); lower it"
            )
        chunk = chunk_tokens or min(DEFAULT_CHUNK, room)
        if chunk > room:
            raise UsageError(
                f"a {chunk:,}-token chunk, the {memory:,}-token memory and its rewrite need "
                f"{chunk + 2 * memory + fixed:,} tokens, more than the model's {window:,}-token window; "
                f"use --chunk-tokens {room} or less"
            )
        return cls(chunk, memory, max_turns)


@dataclass
class Progress:
    """Where a job is, for a progress bar or an MCP progress notification."""

    job_id: int
    strategy: str
    phase: str  # loading, reading, answering, done
    tokens_read: int = 0
    tokens_total: int = 0
    chunks: int = 0
    chunks_total: int = 0
    model_calls: int = 0


class MeteredModel(ModelWrapper):
    """A model that counts its calls and the seconds spent in them; closing it leaves the model open."""

    def __init__(self, model: Model, calls: int = 0) -> None:
        super().__init__(model)
        self.calls = calls
        self.seconds = 0.0

    async def generate(self, request: Request) -> Reply:
        started = time.perf_counter()
        try:
            return await self.inner.generate(request)
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - started
