"""Everything persistent: the SQLite home, context objects, the memory graph."""

from memory.context import ContextObject, ContextStore
from memory.errors import (
    BackendError,
    BackendTimeout,
    LociError,
    ModelBehaviorError,
    NotFoundError,
    StoreError,
    ToolError,
    UsageError,
)
from memory.graph import Graph, NewNode
from memory.recall import Recall
from memory.runs import RunRecord, Runs
from memory.store import Store, default_db_path

__all__ = [
    "BackendError",
    "BackendTimeout",
    "ContextObject",
    "ContextStore",
    "Graph",
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
