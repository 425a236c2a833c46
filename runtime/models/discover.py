"""Asking an OpenAI-compatible server how large its context window is.

The `/v1` API has no standard field for it, but the common local servers say
it elsewhere: llama.cpp's `llama-server` in `GET /props`
(`default_generation_settings.n_ctx`), vLLM in `GET /v1/models`
(`max_model_len`). When neither answers, the caller keeps its default (or
the user's `--context-window`), so a hosted API costs two quick 404s at most.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from memory.errors import BackendError
from runtime.models.http_errors import translate_httpx

__all__ = ["server_context_window"]

TIMEOUT_S = 5.0


async def server_context_window(client: httpx.AsyncClient, base_url: str, model: str) -> int | None:
    base = base_url.rstrip("/")
    root = base.removesuffix("/v1")
    probes: list[tuple[str, Callable[[Any, str], int | None]]] = [
        (f"{root}/props", _from_props),
        (f"{base}/models", _from_models),
    ]
    for url, pick in probes:
        try:
            with translate_httpx(url):
                response = await client.get(url, timeout=TIMEOUT_S)
            found = pick(response.json(), model) if response.status_code == 200 else None
        except (BackendError, ValueError):
            continue
        if found:
            return found
    return None


def _from_props(body: Any, model: str) -> int | None:
    if not isinstance(body, dict):
        return None
    settings = body.get("default_generation_settings")
    value = settings.get("n_ctx") if isinstance(settings, dict) else body.get("n_ctx")
    return int(value) if isinstance(value, int) and value > 0 else None


def _from_models(body: Any, model: str) -> int | None:
    entries = body.get("data") if isinstance(body, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [entry for entry in entries if isinstance(entry, dict)]
    chosen = [entry for entry in entries if entry.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        value = entry.get("max_model_len")
        if isinstance(value, int) and value > 0:
            return value
    return None
