"""Vectors for recall by meaning: the embedder seam and the vector format.

`memory/` needs no model. Where a deployment has one, `runtime/` passes in an
`Embedder`: an async callable from a list of texts to one vector each
(runtime/models/embedders.py builds them from a GGUF or an `/v1/embeddings`
endpoint). Vectors are stored as little-endian float32 blobs, normalised to
unit length, so cosine similarity is a dot product.

The vectors are searched inside SQLite by the sqlite-vec extension
(memory/graph/vectors.py).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Awaitable, Callable, Sequence

__all__ = ["Embedder", "pack_vector", "unit"]

Embedder = Callable[[list[str]], Awaitable[list[list[float]]]]


def unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else list(vector)


def pack_vector(vector: Sequence[float]) -> bytes:
    """A unit-length float32 little-endian blob."""
    values = unit(vector)
    return struct.pack(f"<{len(values)}f", *values)
