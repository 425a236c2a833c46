"""A deterministic model for tests and for benchmarks of the runtime itself.

`ScriptedModel` replies from a list, in order. A step is either the reply
text (a string or a dict that is sent as JSON) or a callable that receives
the `Request` and returns one, so a script can react to what the runtime
shows it. Every request is recorded in `calls`; `check_used()` fails when
steps are left over, and the test suite calls it for every scripted model a
test makes (`tests/conftest.py`), so a loop that stopped early fails.

Built with a `scorer` (a callable from the messages and one candidate to
that candidate's log-probability), it scores candidate replies as the llama
backend does (`runtime.models.base.Continuation`, the score on one token);
without one it cannot score, as a remote model cannot.

It is not a stand-in for proving that a model works: the real GGUF and the
real server have their own tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from loci.memory.errors import BackendError, UsageError
from loci.runtime.models.base import Continuation, Reply, Request

__all__ = ["ScriptedModel"]

Step = str | dict[str, Any] | Callable[[Request], str | dict[str, Any]]
Scorer = Callable[[list[dict[str, str]], str], float]


class ScriptedModel:
    """Replies from a script; counts tokens as whitespace-separated words, or with `counter`."""

    def __init__(
        self,
        steps: Iterable[Step] = (),
        *,
        context_window: int = 8_192,
        name: str = "scripted",
        repeat_last: bool = False,
        counter: Callable[[str], int] | None = None,
        parameters: int | None = None,
        serial: bool = True,
        scorer: Scorer | None = None,
    ) -> None:
        self.name = name
        self.serial = serial  # False: it stands for a remote model, which serves calls concurrently
        self.counter = counter or (lambda text: len(text.split()))
        self.context_window = context_window
        self.parameters = parameters
        self.steps = list(steps)
        self.calls: list[Request] = []
        self.repeat_last = repeat_last
        self.scorer = scorer
        self.can_score = scorer is not None
        self.scored: list[list[str]] = []  # the candidates of each `score` call
        self._next = 0

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """A script file is a JSON list of replies (objects are sent as JSON text)."""
        try:
            steps = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read the script {path}: {exc}") from exc
        if not isinstance(steps, list):
            raise UsageError(f"the script {path} must be a JSON list of replies")
        return cls(steps, name=f"scripted:{path}")

    def count_tokens(self, text: str) -> int:
        return self.counter(text)

    async def generate(self, request: Request) -> Reply:
        self.calls.append(request)
        if self._next >= len(self.steps):
            if not (self.repeat_last and self.steps):
                raise BackendError(f"the scripted model ran out of steps after {len(self.steps)} replies")
            step = self.steps[-1]
        else:
            step = self.steps[self._next]
            self._next += 1
        reply = step(request) if callable(step) else step
        text = reply if isinstance(reply, str) else json.dumps(reply)
        if request.on_text:
            request.on_text(text)
        prompt = sum(self.count_tokens(m["content"]) for m in request.messages)
        return Reply(text=text, prompt_tokens=prompt, completion_tokens=self.count_tokens(text))

    async def score(self, messages: list[dict[str, str]], candidates: list[str]) -> list[Continuation]:
        if self.scorer is None:
            raise BackendError("this scripted model was built without a scorer")
        self.scored.append(list(candidates))
        return [Continuation((self.scorer(messages, candidate),), 0.0) for candidate in candidates]

    def check_used(self) -> None:
        """Raise if scripted steps were never asked for."""
        left = len(self.steps) - self._next
        if left > 0:
            raise AssertionError(f"{left} scripted step(s) were never used")

    async def aclose(self) -> None:
        return None
