"""Which full-text index a connection's home has: SQLite's FTS5 or PostgreSQL's `tsvector`.

Both modules (memory/graph/fts/sqlite.py, memory/graph/fts/postgres.py) give
the same five functions, `stems`, `documents`, `matches`,
`holding_every` and `world_scores` (matches scored again without a run's
records in the statistics, memory/graph/run_records.py); the recall steps (memory/graph/terms.py,
memory/graph/ranking.py) and granularity's look-alikes
(memory/evolution/granularity.py) call them through
`text_index(conn)`, chosen by the engine's dialect, so nothing above this
module asks which engine it runs on.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from loci.memory.engines.dialects import dialect_of
from loci.memory.graph.fts import postgres, sqlite

__all__ = ["text_index"]


def text_index(conn: Any) -> ModuleType:
    """The full-text module of the engine `conn` belongs to."""
    return dialect_of(conn).pick(sqlite=sqlite, postgresql=postgres)
