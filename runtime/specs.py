"""Model spec strings: one string names a backend and its model.

    llama:default                        the bundled GGUF (the `local` extra)
    llama:/models/qwen3-4b.gguf          any GGUF file
    openai:gpt-4.1-mini                  api.openai.com, key from LOCI_API_KEY or OPENAI_API_KEY
    openai:local@http://127.0.0.1:8080/v1  any OpenAI-compatible server (llama.cpp, Ollama, vLLM)
    scripted:replies.json                deterministic replies, for tests and benchmarks
"""

from __future__ import annotations

from memory.errors import UsageError
from runtime.model import Model

__all__ = ["DEFAULT_SPEC", "load_model", "parse_spec"]

DEFAULT_SPEC = "llama:default"
BACKENDS = ("llama", "openai", "scripted")


def parse_spec(spec: str) -> tuple[str, str, str | None]:
    """`openai:m@http://h/v1` -> ("openai", "m", "http://h/v1"); a clear error for a bad spec."""
    backend, sep, rest = spec.partition(":")
    if backend not in BACKENDS or (not sep and backend != "scripted"):
        raise UsageError(f"bad model spec {spec!r}; use llama:default, llama:PATH.gguf, openai:MODEL[@URL] or scripted:FILE")
    if backend == "openai" and "@" in rest:
        name, _, url = rest.partition("@")
        return backend, name, url
    return backend, rest, None


async def load_model(spec: str = DEFAULT_SPEC, *, context_window: int | None = None) -> Model:
    backend, name, url = parse_spec(spec)
    if backend == "llama":
        from runtime.llama_backend import DEFAULT_CONTEXT, LlamaModel

        return await LlamaModel.load(name or "default", context_window=context_window or DEFAULT_CONTEXT)
    if backend == "openai":
        from runtime.openai_backend import OpenAIModel

        kwargs = {"context_window": context_window} if context_window else {}
        model = OpenAIModel(name, url or "https://api.openai.com/v1", **kwargs)
        if url and not context_window:
            await model.discover_context_window()  # a local server: ask it, rather than assume
        return model
    from runtime.scripted import ScriptedModel

    if not name:
        raise UsageError("the scripted backend needs a file of replies: scripted:FILE.json")
    return ScriptedModel.from_file(name)
