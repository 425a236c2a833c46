"""Spec strings: one string names a backend and its model, for chat models and embedders alike.

    llama:default                        the bundled GGUF (the `local` extra)
    llama:/models/qwen3-4b.gguf          any GGUF file
    openai:gpt-4.1-mini                  api.openai.com, key from LOCI_API_KEY or OPENAI_API_KEY
    openai:local@http://127.0.0.1:8080/v1  any OpenAI-compatible server (llama.cpp, Ollama, vLLM)
    scripted:replies.json                deterministic replies, for tests and benchmarks

`parse_spec` is the one parser (`runtime.models.embedders` reads embedder specs
with it, with its own set of backends), and `key_from_env` the one place that
reads the key from the environment, so a chat model and an embedder on the
same endpoint authenticate the same way.
"""

from __future__ import annotations

from typing import NamedTuple

from loci.memory.errors import UsageError
from loci.runtime.models.base import Model
from loci.runtime.models.keys import KEY_VARIABLES, OPENAI_URL, key_from_env

__all__ = ["DEFAULT_SPEC", "Spec", "load_model", "parse_spec"]

DEFAULT_SPEC = "llama:default"
BACKENDS = ("llama", "openai", "scripted")
MODEL_FORMS = "llama:default, llama:PATH.gguf, openai:MODEL[@URL] or scripted:FILE"


class Spec(NamedTuple):
    backend: str
    name: str
    url: str | None = None


def parse_spec(spec: str, backends: tuple[str, ...] = BACKENDS, forms: str = MODEL_FORMS, what: str = "model") -> Spec:
    """`openai:m@http://h/v1` -> Spec("openai", "m", "http://h/v1"); a `UsageError` naming `forms` otherwise."""
    backend, sep, rest = spec.partition(":")
    if backend not in backends or (not sep and backend != "scripted"):
        raise UsageError(f"bad {what} spec {spec!r}; use {forms}")
    if backend == "openai" and "@" in rest:
        name, _, url = rest.partition("@")
        return Spec(backend, name, url)
    return Spec(backend, rest)


async def load_model(spec: str = DEFAULT_SPEC, *, context_window: int | None = None) -> Model:
    backend, name, url = parse_spec(spec)
    if context_window is not None and context_window < 1:
        raise UsageError(f"--context-window must be a positive number of tokens (got {context_window})")
    if backend == "llama":
        from loci.runtime.models.llama.backend import DEFAULT_CONTEXT, LlamaModel

        return await LlamaModel.load(name or "default", context_window=context_window or DEFAULT_CONTEXT)
    if backend == "openai":
        from loci.runtime.models.openai import OpenAIModel

        if not url and not key_from_env():
            raise UsageError(
                f"no API key is set for openai:{name} at {OPENAI_URL}: set one of {', '.join(KEY_VARIABLES)}, "
                f"or name a local server (openai:{name}@http://127.0.0.1:8080/v1)"
            )
        kwargs = {"context_window": context_window} if context_window else {}
        model = OpenAIModel(name, url or OPENAI_URL, **kwargs)
        if url and not context_window:
            await model.discover_context_window()  # a local server: ask it, rather than assume
        if url:
            await model.discover_parameters()  # so a small model is planned as one, whatever serves it
            await model.discover_scoring()  # so spans are chosen by likelihood where the server can say it
        return model
    from loci.runtime.models.scripted import ScriptedModel

    if not name:
        raise UsageError("the scripted backend needs a file of replies: scripted:FILE.json")
    return ScriptedModel.from_file(name)
