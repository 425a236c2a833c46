"""Everything persistent: the SQLite home, context objects, the memory graph.

The names are resolved when first used (module `__getattr__`), so importing
one submodule (`memory.errors`, `memory.store`) does not import them all.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "BackendError",
    "BackendTimeout",
    "BackendUnreachable",
    "ContextObject",
    "ContextStore",
    "Evolution",
    "Graph",
    "InvalidAction",
    "LociError",
    "ModelBehaviorError",
    "NewNode",
    "NotFoundError",
    "Recall",
    "RunRecord",
    "Runs",
    "Store",
    "StoreError",
    "ToolError",
    "UsageError",
    "default_db_path",
]

_ERRORS = (
    "BackendError",
    "BackendTimeout",
    "BackendUnreachable",
    "InvalidAction",
    "LociError",
    "ModelBehaviorError",
    "NotFoundError",
    "StoreError",
    "ToolError",
    "UsageError",
)
_HOMES: dict[str, str] = {
    **dict.fromkeys(_ERRORS, "memory.errors"),
    "ContextObject": "memory.context.store",
    "ContextStore": "memory.context.store",
    "Evolution": "memory.evolution.evolution",
    "Graph": "memory.graph.graph",
    "NewNode": "memory.graph.graph",
    "Recall": "memory.graph.recall",
    "RunRecord": "memory.runs",
    "Runs": "memory.runs",
    "Store": "memory.store",
    "default_db_path": "memory.store",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'memory' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
