"""The model seam: one small protocol every backend implements.

A backend counts tokens with its own tokenizer and answers one `Request`
with one `Reply`. A request with a `schema` asks for structured output: the
reply's text must be JSON that follows the schema (the llama backend enforces
it with a grammar, the openai backend with JSON-schema output); a request
without one asks for free text. Everything above the seam (the turn loop,
recursion, note writing) goes through `generate`.

Backends are named by spec strings, parsed by `runtime.models.specs.load_model`:
`llama:default`, `llama:/models/x.gguf`, `openai:MODEL`,
`openai:MODEL@http://127.0.0.1:8080/v1`, `scripted:FILE.json`.

A backend may also score: `score(messages, candidates)` gives, for each
candidate reply, the log-probability of each of its tokens after the chat
prompt of `messages`, and of the turn ending after it (`Continuation`). The
llama backend scores (`runtime.models.llama.scoring`: the prompt evaluated
once, each candidate from its KV cache); the scripted model scores when it is
built with a scorer; the openai backend scores where its server can generate a
given candidate and report its log-probabilities (llama-cpp-python's server,
llama.cpp's: `runtime.models.remote_scoring`), which it probes once, and not on
a plain OpenAI endpoint (a chat endpoint returns the log-probabilities of what
it generates, not of given text). `can_score` says which, and the runtime keeps
free generation for a model that cannot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Continuation", "Model", "Reply", "Request", "can_score", "is_serial"]


@dataclass
class Request:
    """One call to a model.

    `messages` are chat messages (`{"role", "content"}`); `schema`, when set,
    is the JSON schema the reply must follow; `on_text`, when set, receives
    the reply's text as it streams. `interrupt`, when set, is asked between
    generated tokens and True ends the reply there: a background call giving
    way to the foreground. The llama backend honours it; a backend that serves
    calls concurrently (`serial = False`) has no need to.
    """

    messages: list[dict[str, str]]
    schema: dict[str, Any] | None = None
    max_tokens: int = 512
    temperature: float = 0.0
    purpose: str = "act"
    on_text: Callable[[str], None] | None = None
    interrupt: Callable[[], bool] | None = None


@dataclass
class Reply:
    """What a model returned, with the counts the runtime budgets and reports."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    reused_tokens: int = 0
    seconds: float = 0.0
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def evaluated_tokens(self) -> int:
        """Prompt tokens the backend actually had to process (not served from its cache)."""
        return self.prompt_tokens - self.reused_tokens


@runtime_checkable
class Model(Protocol):
    """A model backend. Implement `count_tokens` and `generate`.

    `parameters` is the model's parameter count when the backend knows it (a GGUF does), else None.
    A backend may set `serial = False` when it serves calls concurrently (a remote server): then a
    background call does not hold up a foreground one (`is_serial`)."""

    name: str
    context_window: int
    parameters: int | None

    def count_tokens(self, text: str) -> int:
        """Tokens in `text`, by the model's own tokenizer where it has one."""
        ...

    async def generate(self, request: Request) -> Reply:
        """Answer one request. Raise `BackendError` when the backend fails."""
        ...

    async def aclose(self) -> None:
        """Release files, threads and connections."""
        ...


def is_serial(model: Model) -> bool:
    """Whether `model` runs one call at a time, so that a background call would delay the foreground's."""
    return bool(getattr(model, "serial", True))


@dataclass(frozen=True)
class Continuation:
    """A candidate reply's score: the log-probability of each of its tokens, and of the turn ending after it."""

    logprobs: tuple[float, ...]
    end: float

    @property
    def total(self) -> float:
        """The log-probability of the candidate's tokens."""
        return sum(self.logprobs) if self.logprobs else float("-inf")

    @property
    def mean(self) -> float:
        """The mean log-probability of its tokens: the total, normalised for length."""
        return self.total / len(self.logprobs) if self.logprobs else float("-inf")


def can_score(model: Model) -> bool:
    """Whether `model` scores candidate replies (`score(messages, candidates) -> list[Continuation]`)."""
    return bool(getattr(model, "can_score", False)) and callable(getattr(model, "score", None))
