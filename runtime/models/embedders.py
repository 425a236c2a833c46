"""Embedders for recall by meaning: a local GGUF or an `/v1/embeddings` endpoint.

Both satisfy `memory.graph.embed.Embedder` (an async callable from texts to
vectors), so `memory/` never imports a model library. `llama` loads a GGUF
through `runtime.models.llama.load` (the one decision about llama.cpp's extra buffer types)
with `embedding=True` and runs every call in a worker thread behind one lock,
because a `Llama` is not thread-safe. `openai` posts to any OpenAI-compatible
server through an `httpx.AsyncClient`, which tests replace with one built on
`httpx.MockTransport`; its errors are translated by `runtime.models.http_errors`.

A spec names one: `llama:/models/bge-small.gguf`, `openai:text-embedding-3-small`,
`openai:nomic-embed-text@http://127.0.0.1:11434/v1`, read by the same parser
as model specs (`runtime.models.specs`), and with the same API key variables.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import anyio.to_thread
import httpx

from loci.memory.errors import BackendError, UsageError
from loci.memory.graph.embed import Embedder
from loci.runtime.models.http_errors import translate_httpx
from loci.runtime.models.keys import OPENAI_URL, key_from_env
from loci.runtime.models.llama.load import open_llama
from loci.runtime.models.specs import parse_spec

__all__ = ["embedder_from_spec", "llama_embedder", "openai_embedder"]

EMBEDDER_FORMS = "none, llama:PATH.gguf or openai:MODEL[@URL]"
BATCH = 64


def llama_embedder(path: str | os.PathLike[str], n_ctx: int = 512) -> Embedder:
    """An embedder over a local GGUF, loaded once with `embedding=True`."""
    model_path = Path(path).expanduser()
    if not model_path.is_file():
        raise UsageError(f"no GGUF model at {model_path}")
    try:
        llm = open_llama(model_path, embedding=True, n_ctx=n_ctx, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise BackendError(f"cannot load {model_path} for embeddings: {exc}") from exc
    lock = threading.Lock()

    def embed_sync(texts: list[str]) -> list[list[float]]:
        with lock:
            try:
                return [_pooled(llm.embed(text)) for text in texts]
            except (ValueError, RuntimeError) as exc:
                raise BackendError(f"llama embedding failed: {exc}") from exc

    async def embed(texts: list[str]) -> list[list[float]]:
        return await anyio.to_thread.run_sync(embed_sync, list(texts))

    return embed


def _pooled(vector: Any) -> list[float]:
    """One vector per text: a model without pooling returns one per token, so average them."""
    if vector and isinstance(vector[0], list):
        return [sum(column) / len(vector) for column in zip(*vector, strict=True)]
    return [float(x) for x in vector]


def openai_embedder(
    model: str,
    base_url: str = OPENAI_URL,
    api_key: str | None = None,
    client: httpx.AsyncClient | None = None,
    timeout: float = 60.0,
) -> Embedder:
    """An embedder over `POST {base_url}/embeddings` (OpenAI, llama.cpp server, Ollama, vLLM)."""
    key = api_key if api_key is not None else key_from_env()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    http = client or httpx.AsyncClient(timeout=timeout)
    url = base_url.rstrip("/") + "/embeddings"

    async def embed(texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            vectors.extend(await _post(http, url, headers, model, texts[start : start + BATCH]))
        return vectors

    return embed


async def _post(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], model: str, texts: list[str]
) -> list[list[float]]:
    with translate_httpx(url):
        response = await http.post(url, json={"model": model, "input": texts}, headers=headers)
    if response.status_code != 200:
        raise BackendError(f"{url} answered {response.status_code}: {response.text[:200]}")
    try:
        data = sorted(response.json()["data"], key=lambda item: item["index"])
        vectors = [[float(x) for x in item["embedding"]] for item in data]
    except (ValueError, KeyError, TypeError) as exc:
        raise BackendError(f"{url} returned no embeddings: {response.text[:200]}") from exc
    if len(vectors) != len(texts):
        raise BackendError(f"{url} returned {len(vectors)} embeddings for {len(texts)} texts")
    return vectors


def embedder_from_spec(spec: str, client: httpx.AsyncClient | None = None) -> Embedder | None:
    """`none`, `llama:PATH` or `openai:MODEL[@BASE_URL]` as an embedder (None for `none`)."""
    if spec == "none":
        return None
    backend, name, url = parse_spec(spec, ("llama", "openai"), EMBEDDER_FORMS, "embedder")
    if not name:
        raise UsageError(f"the embedder spec {spec!r} names no model; use {EMBEDDER_FORMS}")
    if backend == "llama":
        return llama_embedder(name)
    return openai_embedder(name, url or OPENAI_URL, client=client)
