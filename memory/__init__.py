"""Everything persistent: the SQLite home, context objects, the memory graph."""

from memory.context.store import ContextObject, ContextStore
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
from memory.evolution.evolution import Evolution
from memory.graph.graph import Graph, NewNode
from memory.graph.recall import Recall
from memory.runs import RunRecord, Runs
from memory.store import Store, default_db_path

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
