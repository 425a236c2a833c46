"""Opening a home on the engine its location names.

`open_engine(db)` opens a PostgreSQL connection string with `PgStore` and
anything else, a path, with SQLite's `Store`; `use_engine` is the same for a
block (a store given is the caller's, used and left open). Only the parts that run on PostgreSQL open a home
this way; the rest call `memory.engines.sqlite.store.Store.open`, which refuses a
connection string in one line (`UsageError`, exit 2) naming what does.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext

from loci.memory.engines.base import Engine
from loci.memory.engines.sqlite.store import Store
from loci.memory.location import is_postgres, need_postgres_driver

__all__ = ["open_engine", "use_engine"]


async def open_engine(db: str | os.PathLike[str], *, query_only: bool = False) -> Engine:
    """The home at `db`: PostgreSQL for a `postgresql://` connection string, else the SQLite file at that path."""
    if is_postgres(db):
        need_postgres_driver()
        from loci.memory.engines.postgres.store import PgStore  # psycopg is the `postgres` extra: only when asked for

        return await PgStore.open(os.fspath(db), query_only=query_only)
    return await Store.open(db, query_only=query_only)


def use_engine(db: str | os.PathLike[str] | Engine) -> AbstractAsyncContextManager[Engine]:
    """The home for a block: an engine given is used and left open; a location is opened and closed after."""
    return nullcontext(db) if not isinstance(db, str | os.PathLike) else _opened(db)


@asynccontextmanager
async def _opened(db: str | os.PathLike[str]) -> AsyncIterator[Engine]:
    store = await open_engine(db)
    try:
        yield store
    finally:
        store.close()
