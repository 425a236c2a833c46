"""One base for a model that delegates to another: `ModelWrapper`.

Several layers wrap the session's model to add one thing to its calls: a
shared limiter (`runtime.loop.recursion`), a call meter (`runtime.digest.settings`),
a benchmark's rewrite of each reply (`bench.model.latency`). Each subclasses
`ModelWrapper` and overrides `generate`; everything else the `Model` protocol
has (`name`, `context_window`, `parameters`, `count_tokens`, and `serial`,
which says whether the inner model serves calls concurrently) is read from
the inner model, so a wrapped remote model is still seen as one
(`runtime.models.base.is_serial`), and `score` and `can_score` are the inner
model's, so a wrapped model that scores still does.

Closing a wrapper leaves the inner model open: it belongs to whoever built it.
"""

from __future__ import annotations

from loci.runtime.models.base import Continuation, Model, Reply, Request, can_score, is_serial

__all__ = ["ModelWrapper"]


class ModelWrapper:
    """A model that delegates every property and call of the protocol to `inner`."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def context_window(self) -> int:
        return self.inner.context_window

    @property
    def parameters(self) -> int | None:
        return self.inner.parameters

    @property
    def serial(self) -> bool:
        return is_serial(self.inner)

    @property
    def can_score(self) -> bool:
        return can_score(self.inner)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    async def score(self, messages: list[dict[str, str]], candidates: list[str]) -> list[Continuation]:
        return await self.inner.score(messages, candidates)  # type: ignore[attr-defined]

    async def generate(self, request: Request) -> Reply:
        return await self.inner.generate(request)

    async def aclose(self) -> None:
        return None  # the inner model belongs to whoever built it
