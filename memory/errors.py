"""Every error Loci raises on purpose, in one tree.

    LociError
    ├── UsageError          the user asked for something Loci cannot do
    │   └── NotFoundError   an id, a file or a model that does not exist
    ├── BackendError        a model backend failed (load, network, server)
    │   ├── BackendTimeout  it did not answer in time
    │   └── BackendUnreachable  it could not be reached, or the connection broke
    ├── ModelBehaviorError  the model replied, but not with a valid action
    │   └── InvalidAction   one reply that is not a valid action (sent back; the model retries)
    ├── ToolError           a tool was called with arguments it cannot honour
    └── StoreError          the SQLite home cannot be opened or written
        └── StoreUnavailable  the database cannot be reached, or stayed locked: try again later

The split that matters: `UsageError` is the person's to fix (a bad flag, a
missing file) and `ModelBehaviorError` is the model's (bad JSON, an unknown
tool). They get different messages. Foreign exceptions are translated where
they enter: sqlite3's in `memory.engines.sqlite.store`, httpx's in one place
(`runtime.models.http_errors`), llama_cpp's where a GGUF is loaded or run.

This module lives in `memory/`, the bottom layer, so that every layer above
can raise and catch the same classes.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "BackendTimeout",
    "BackendUnreachable",
    "InvalidAction",
    "LociError",
    "ModelBehaviorError",
    "NotFoundError",
    "StoreError",
    "StoreUnavailable",
    "ToolError",
    "UsageError",
]


class LociError(Exception):
    """Base of every error Loci raises on purpose."""


class UsageError(LociError):
    """The user asked for something Loci cannot do; the message says how to fix it."""


class NotFoundError(UsageError):
    """An id, a file or a model that does not exist."""


class BackendError(LociError):
    """A model backend failed: it would not load, or its server refused or broke."""


class BackendTimeout(BackendError):
    """A model backend did not answer within its timeout."""


class BackendUnreachable(BackendError):
    """A model backend's server could not be reached, or the connection broke mid-exchange."""


class ModelBehaviorError(LociError):
    """The model replied, but the reply is not a valid action, after all retries."""


class InvalidAction(ModelBehaviorError):
    """One reply that is not a valid action; the message is shown to the model, which may retry."""


class ToolError(LociError):
    """A tool cannot honour its arguments; the model reads the message and may retry."""


class StoreError(LociError):
    """The SQLite home cannot be opened, migrated or written."""


class StoreUnavailable(StoreError):
    """The database cannot be reached (down, restarting, the connection lost) or another process held its lock
    past the busy timeout: nothing is wrong with the home, and the same call may succeed later. `in_doubt`: a write
    whose commit the database never confirmed, so it may or may not have been stored."""

    def __init__(self, message: str, *, in_doubt: bool = False) -> None:
        super().__init__(message)
        self.in_doubt = in_doubt
