"""The dialect of a store, or of the connection a transaction runs on (memory/engines/base.py).

PostgreSQL's store and connection name their dialect (`dialect`); SQLite's,
sqlite3's own classes and `memory.engines.sqlite.store.Store`, do not, and are SQLite's.
This module imports neither engine's driver nor sqlite-utils, so the hook's
recall, which reads its home with sqlite3 alone, can ask it.
"""

from __future__ import annotations

from loci.memory.engines.base import Dialect
from loci.memory.engines.sqlite.dialect import SQLITE

__all__ = ["dialect_of"]


def dialect_of(store_or_conn: object) -> Dialect:
    """The SQL fragments of the engine `store_or_conn` belongs to."""
    return getattr(store_or_conn, "dialect", SQLITE)
