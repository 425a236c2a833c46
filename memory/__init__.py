"""Everything persistent: the SQLite home, context objects, the memory graph.

The errors are imported at once; the rest on first use (`__getattr__`), so a
process that needs one corner of the layer, such as a coding agent's hook
(memory/hooks/), does not pay for importing all of it.
"""

from __future__ import annotations

import importlib
from typing import Any

from memory.errors import (
    BackendError,
    BackendTimeout,
    BackendUnreachable,
    InvalidAction,
    LociError,
    ModelBehaviorError,
    NotFoundError,
    StoreError,
    ToolError,
    UsageError,
)

_LAZY = {
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


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'memory' has no attribute {name!r}")
