"""Everything persistent: the SQLite home, context objects, the memory graph.

The names are resolved when first used (a module `__getattr__`, memory/lazy.py), so importing
one submodule (`memory.errors`, `memory.engines.sqlite.store`) does not import them all.

sqlite-utils imports numpy, if it is installed, only to store numpy scalars
as SQLite values; Loci never hands it any (vectors are packed to bytes), and
numpy costs more CPU to import than the rest of `loci memory search`. So
this package, which every layer imports before sqlite-utils, puts a finder
first on `sys.meta_path` that imports sqlite-utils, when a module first asks
for it, with numpy hidden for that one import (`_SqliteUtilsWithoutNumpy`);
numpy stays importable for everything else. A process that never asks for
sqlite-utils (the hook recall, memory/hooks/recall.py) never pays for it.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import loci.memory.errors as _errors  # a small module of classes: its names are the tree's
from loci.memory.lazy import lazy_members

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
    "StoreUnavailable",
    "ToolError",
    "UsageError",
    "default_db_path",
]

_HOMES: dict[str, str] = {
    **dict.fromkeys(_errors.__all__, "loci.memory.errors"),
    "ContextObject": "loci.memory.context.store",
    "ContextStore": "loci.memory.context.store",
    "Evolution": "loci.memory.evolution.evolution",
    "Graph": "loci.memory.graph.graph",
    "NewNode": "loci.memory.graph.graph",
    "Recall": "loci.memory.graph.recall",
    "RunRecord": "loci.memory.records.runs",
    "Runs": "loci.memory.records.runs",
    "Store": "loci.memory.engines.sqlite.store",
    "default_db_path": "loci.memory.engines.sqlite.store",
}


__getattr__ = lazy_members(__name__, _HOMES)


class _SqliteUtilsWithoutNumpy:
    """Loads sqlite-utils, the first time it is imported, with `import numpy` failing; then steps aside.

    A finder and a loader by their methods alone: importing `importlib.abc` to subclass would add its import
    to the hook process's start."""

    def __init__(self) -> None:
        self._loader: Any = None

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "sqlite_utils":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or "numpy" in sys.modules:
            return spec
        self._loader, spec.loader = spec.loader, self
        return spec

    def create_module(self, spec: Any) -> Any:
        assert self._loader is not None
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        assert self._loader is not None
        sys.modules["numpy"] = None  # type: ignore[assignment]  # makes `import numpy` raise ImportError
        try:
            self._loader.exec_module(module)
        finally:
            del sys.modules["numpy"]


if "sqlite_utils" not in sys.modules:
    sys.meta_path.insert(0, _SqliteUtilsWithoutNumpy())
