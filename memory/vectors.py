"""Nearest vectors, computed inside SQLite by the sqlite-vec extension.

The vectors stay where the graph writes them (`memory_vectors`, unit-length
float32 blobs, see memory/embed.py); a search is one SQL statement in which
sqlite-vec's `vec_distance_cosine` scans them in C, so no vector is ever
copied into Python. The scan is exact: at the sizes an agent's memory
reaches, it costs less than keeping an approximate index in step with every
write.

sqlite-vec is a loadable extension, and some Python builds (pyenv's, by
default) ship a `sqlite3` module that cannot load extensions. The search
therefore opens its own read connection: through `sqlite3` when it can load
extensions, else through `sqlean` (the `sqlean.py` package, the same API with
loading enabled). Both come with the `vectors` extra; recall without an
embedder needs neither.
"""

from __future__ import annotations

import importlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from memory.embed import pack_vector
from memory.errors import UsageError

__all__ = ["VectorSearch", "vector_module"]

INSTALL_HINT = "vector recall needs sqlite-vec: pip install 'loci-agent[vectors]'"


def vector_module() -> tuple[ModuleType, ModuleType]:
    """`(sqlite module that can load extensions, sqlite_vec)`, or a `UsageError` that says what to install."""
    try:
        sqlite_vec = importlib.import_module("sqlite_vec")
    except ImportError as exc:
        raise UsageError(INSTALL_HINT) from exc
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3, sqlite_vec
    try:
        return importlib.import_module("sqlean"), sqlite_vec
    except ImportError as exc:
        raise UsageError(f"this Python's sqlite3 cannot load extensions; {INSTALL_HINT}") from exc


class VectorSearch:
    """Cosine top-k over one home's stored vectors, through sqlite-vec.

    Each search opens its own short read connection (a WAL snapshot, like any
    reader) and loads the extension into it: nothing to close afterwards, and
    the cost is small beside computing the query's embedding."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def search(self, query: Sequence[float], k: int) -> list[tuple[int, float]]:
        """`(node id, cosine similarity)` of the k live nodes nearest to `query`, nearest first (blocking)."""
        module, sqlite_vec = vector_module()
        blob = pack_vector(query)
        sql = (
            "SELECT v.node, 1.0 - vec_distance_cosine(v.vector, ?) AS similarity"
            " FROM memory_vectors v JOIN memory_nodes n ON n.id = v.node"
            " WHERE n.deleted IS NULL AND v.dim = ? ORDER BY similarity DESC, v.node LIMIT ?"
        )
        conn = module.connect(str(self.path), isolation_level=None)
        try:
            conn.enable_load_extension(True)
            sqlite_vec.load(conn)
            conn.enable_load_extension(False)
            rows = conn.execute(sql, [blob, len(query), k]).fetchall()
        finally:
            conn.close()
        return [(node, float(similarity)) for node, similarity in rows]
