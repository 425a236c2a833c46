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
from memory.store import Store, default_db_path

__all__ = [
    "BackendError",
    "BackendTimeout",
    "ContextObject",
    "ContextStore",
    "LociError",
    "ModelBehaviorError",
    "NotFoundError",
    "Store",
    "StoreError",
    "ToolError",
    "UsageError",
    "default_db_path",
]
