"""Nearest vectors, computed inside SQLite by the sqlite-vec extension.

The vectors stay where the graph writes them (`memory_vectors`, unit-length
float32 blobs, see memory/graph/embed.py); a search is one SQL statement in which
sqlite-vec's `vec_distance_cosine` scans them in C, so no vector is ever
copied into Python. The scan is exact: at the sizes an agent's memory
reaches, it costs less than keeping an approximate index in step with every
write.

sqlite-vec is a loadable extension. Where Python's `sqlite3` can load
extensions, each search connection loads it. Some builds cannot (pyenv's,
by default, has no `enable_load_extension`); there the extension is
registered once per process with SQLite's own `sqlite3_auto_extension`,
reached through ctypes in the very library `sqlite3` is linked to, so every
connection opened afterwards has it. A second SQLite library (pysqlite3,
sqlean) is deliberately not used: two SQLite copies on one file in one
process do not see each other's POSIX locks, which SQLite documents as a
way to corrupt a database.
"""

from __future__ import annotations

import ctypes
import importlib
import sqlite3
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from loci.memory.errors import UsageError
from loci.memory.graph.embed import pack_vector
from loci.memory.projects import in_project

__all__ = ["VectorSearch", "sqlite_vec_module"]

INSTALL_HINT = "vector recall needs sqlite-vec: pip install 'loci-agent[vectors]'"
CAN_LOAD = hasattr(sqlite3.Connection, "enable_load_extension")

_registered = False
_register_lock = threading.Lock()


def sqlite_vec_module() -> ModuleType:
    """The `sqlite_vec` package, or a `UsageError` that says what to install."""
    try:
        return importlib.import_module("sqlite_vec")
    except ImportError as exc:
        raise UsageError(INSTALL_HINT) from exc


def _register_auto_extension(sqlite_vec: ModuleType) -> None:
    """Make every SQLite connection of this process open with sqlite-vec (once)."""
    global _registered
    with _register_lock:
        if _registered:
            return
        import _sqlite3  # the C module: its symbols lead to the libsqlite3 that sqlite3 uses

        try:
            library = ctypes.CDLL(_sqlite3.__file__)
            extension = ctypes.CDLL(sqlite_vec.loadable_path() + _suffix())
            library.sqlite3_auto_extension.argtypes = [ctypes.c_void_p]
            status = library.sqlite3_auto_extension(ctypes.cast(extension.sqlite3_vec_init, ctypes.c_void_p))
        except (OSError, AttributeError) as exc:
            raise UsageError(f"this Python's sqlite3 cannot load sqlite-vec ({exc}); {INSTALL_HINT}") from exc
        if status != 0:
            raise UsageError(f"SQLite refused to register sqlite-vec (code {status})")
        _registered = True


def _suffix() -> str:
    return {"win32": ".dll", "darwin": ".dylib"}.get(sys.platform, ".so")


class VectorSearch:
    """Cosine top-k over one home's stored vectors, through sqlite-vec.

    Each search opens its own short read connection (a WAL snapshot, like any
    reader) with the extension in it: nothing to close afterwards, and the
    cost is small beside computing the query's embedding."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def search(self, query: Sequence[float], k: int, project: str | None = None) -> list[tuple[int, float]]:
        """`(node id, cosine similarity)` of the k live nodes (of `project`, or of every project when None)
        nearest to `query`, nearest first (blocking)."""
        sqlite_vec = sqlite_vec_module()
        if not CAN_LOAD:
            _register_auto_extension(sqlite_vec)
        mine, params = in_project(project, "n.project")
        sql = (
            "SELECT v.node, 1.0 - vec_distance_cosine(v.vector, ?) AS similarity"
            f" FROM memory_vectors v JOIN memory_nodes n ON n.id = v.node WHERE n.deleted IS NULL AND v.dim = ?{mine}"
            " ORDER BY similarity DESC, v.node LIMIT ?"
        )
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            if CAN_LOAD:
                conn.enable_load_extension(True)
                sqlite_vec.load(conn)
                conn.enable_load_extension(False)
            rows = conn.execute(sql, [pack_vector(query), len(query), *params, k]).fetchall()
        finally:
            conn.close()
        return [(node, float(similarity)) for node, similarity in rows]
