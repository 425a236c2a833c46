"""Vectors for recall by meaning: the embedder seam and the vector format.

`memory/` needs no model. Where a deployment has one, `runtime/` passes in an
`Embedder`: an async callable from a list of texts to one vector each
(runtime/embedders.py builds them from a GGUF or an `/v1/embeddings`
endpoint). Vectors are stored as little-endian float32 blobs, normalised to
unit length, so cosine similarity is a dot product.

Search by vector is exact (a brute-force dot product over every stored
vector, numpy when installed): at the sizes an agent's memory reaches, one
matrix product is faster than maintaining an approximate index. `VectorIndex`
keeps the matrix in memory and reloads it only when the table has changed.
"""

from __future__ import annotations

import math
import sqlite3
import struct
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

__all__ = ["Embedder", "VectorIndex", "pack_vector", "unit", "unpack_vector"]

Embedder = Callable[[list[str]], Awaitable[list[list[float]]]]

try:  # numpy makes the scan a matrix product; without it, plain Python (fine for small graphs)
    import numpy as _np
except ImportError:  # pragma: no cover - numpy ships with llama-cpp-python
    _np = None


def unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else list(vector)


def pack_vector(vector: Sequence[float]) -> bytes:
    """A unit-length float32 little-endian blob."""
    values = unit(vector)
    return struct.pack(f"<{len(values)}f", *values)


def unpack_vector(blob: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


class VectorIndex:
    """Every stored vector of one dimension, kept in memory; cosine top-k over them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: tuple[int, ...] | None = None
        self._ids: list[int] = []
        self._matrix: Any = None

    def search(self, conn: sqlite3.Connection, query: Sequence[float], k: int) -> list[tuple[int, float]]:
        """`(node id, cosine)` of the k nearest stored vectors to `query`."""
        ids, matrix = self._snapshot(conn, len(query))
        if not ids:
            return []
        q = unit(query)
        if _np is not None:
            scores = matrix @ _np.asarray(q, dtype=_np.float32)
            k = min(k, len(ids))
            top = _np.argpartition(-scores, k - 1)[:k]
            pairs = [(ids[i], float(scores[i])) for i in top]
        else:
            pairs = [(ids[i], sum(a * b for a, b in zip(row, q, strict=True))) for i, row in enumerate(matrix)]
        return sorted(pairs, key=lambda p: -p[1])[:k]

    def _snapshot(self, conn: sqlite3.Connection, dim: int) -> tuple[list[int], Any]:
        # A vector is only ever inserted or replaced, and a replaced row gets a new
        # rowid, so (count, max rowid) changes whenever the table does. Forgotten
        # nodes may linger until then; recall drops them when it reads the nodes.
        version = (*conn.execute("SELECT count(*), coalesce(max(rowid), 0) FROM memory_vectors").fetchone(), dim)
        with self._lock:
            if version != self._version:
                rows = conn.execute(
                    "SELECT v.node, v.vector FROM memory_vectors v JOIN memory_nodes n ON n.id = v.node"
                    " WHERE n.deleted IS NULL AND v.dim = ?",
                    [dim],
                ).fetchall()
                self._ids = [node for node, _ in rows]
                if _np is not None:
                    blob = b"".join(vector for _, vector in rows)
                    self._matrix = _np.frombuffer(blob, dtype="<f4").reshape(len(rows), dim) if rows else None
                else:
                    self._matrix = [unpack_vector(vector) for _, vector in rows]
                self._version = version
            return self._ids, self._matrix
