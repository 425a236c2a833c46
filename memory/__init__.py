"""Everything persistent: the SQLite home, context objects, the memory graph.

The names are resolved when first used (module `__getattr__`), so importing
one submodule (`memory.errors`, `memory.store`) does not import them all.

sqlite-utils imports numpy, if it is installed, only to store numpy scalars
as SQLite values; Loci never hands it any (vectors are packed to bytes), and
numpy costs more CPU to import than the rest of `loci memory search`. So
this package, which every layer imports before sqlite-utils, imports
sqlite-utils with numpy hidden for that one import (`_import_sqlite_utils`);
numpy stays importable for everything else.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import memory.errors as _errors  # a small module of classes: its names are the tree's

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

_HOMES: dict[str, str] = {
    **dict.fromkeys(_errors.__all__, "memory.errors"),
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


def _import_sqlite_utils() -> None:
    if "sqlite_utils" in sys.modules or "numpy" in sys.modules:
        return
    sys.modules["numpy"] = None  # type: ignore[assignment]  # makes `import numpy` raise ImportError
    try:
        importlib.import_module("sqlite_utils")
    finally:
        del sys.modules["numpy"]


_import_sqlite_utils()
