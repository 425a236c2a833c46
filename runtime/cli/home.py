"""The home a command opens: `--db` (or `$LOCI_DB`, runtime/cli/main.py), else `$LOCI_HOME/loci.db`.

A command that runs on PostgreSQL opens its home with `open_home(db)`, which
takes a SQLite path or a `postgresql://` connection string
(memory/engines/select.py); one that does not yet says so in one line
(`postgres=False`: the same `UsageError` a SQLite-only command's
`Store.open` gives, exit 2) before it opens anything.
"""

from __future__ import annotations

import os
from contextlib import AbstractAsyncContextManager

from loci.memory.engines.base import Engine
from loci.memory.engines.select import use_engine
from loci.memory.engines.sqlite.store import default_db_path
from loci.memory.errors import UsageError
from loci.memory.location import NOT_ON_POSTGRES, is_postgres

__all__ = ["open_home"]


def open_home(db: str | os.PathLike[str] | None, *, postgres: bool = True) -> AbstractAsyncContextManager[Engine]:
    """The command's home for a block, on either engine (or, with `postgres=False`, on SQLite only)."""
    location = db or default_db_path()
    if is_postgres(location) and not postgres:
        raise UsageError(NOT_ON_POSTGRES)
    return use_engine(location)
