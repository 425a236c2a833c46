"""Asking an OpenAI-compatible server how large its context window and its model are.

The `/v1` API has no standard field for either, but the common local servers
say them elsewhere: llama.cpp's `llama-server` gives its window in `GET
/props` (`default_generation_settings.n_ctx`) and the model's parameters in
`GET /v1/models` (`meta.n_params`), vLLM its window in `GET /v1/models`
(`max_model_len`). A server that says neither still names its model, and a
model's name says its size more often than not (`SmolLM2-135M-Instruct`,
`Llama-3-8B`): `server_parameters` reads it from there (`SIZE_IN_NAME`), so
a small model behind llama-cpp-python's server is planned as the small
model it is (`runtime.prompt.catalogue`). When nothing answers, the caller
keeps its default (or the user's `--context-window`), so a hosted API costs
a few quick 404s at most.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePath
from typing import Any

import httpx

from loci.memory.errors import BackendError
from loci.runtime.models.http_errors import translate_httpx

__all__ = ["SIZE_IN_NAME", "server_context_window", "server_parameters"]

TIMEOUT_S = 5.0
# A size in a model's name: `135M`, `1.7B`, `8b` (between separators, so `gpt-4o` or `Q4_1` say nothing).
SIZE_IN_NAME = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)([MmBb])(?![A-Za-z0-9])")
_SCALE = {"m": 1e6, "b": 1e9}


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


async def server_parameters(client: httpx.AsyncClient, base_url: str, model: str) -> int | None:
    """The served model's parameter count: `meta.n_params` of its `/v1/models` entry, else the size its name
    states (its id there, or the name asked for); None when neither says."""
    url = f"{base_url.rstrip('/')}/models"
    try:
        with translate_httpx(url):
            response = await client.get(url, timeout=TIMEOUT_S)
        body = response.json() if response.status_code == 200 else None
    except (BackendError, ValueError):
        body = None
    entries = [entry for entry in (body.get("data") or []) if isinstance(entry, dict)] if isinstance(body, dict) else []
    chosen = [entry for entry in entries if entry.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        meta = entry.get("meta")
        value = meta.get("n_params") if isinstance(meta, dict) else None
        if isinstance(value, int) and value > 0:
            return value
    for name in [*(str(entry.get("id") or "") for entry in chosen), model]:
        if size := _size_in_name(name):
            return size
    return None


def _size_in_name(name: str) -> int | None:
    match = SIZE_IN_NAME.search(PurePath(name).name)
    return int(float(match.group(1)) * _SCALE[match.group(2).lower()]) if match else None
