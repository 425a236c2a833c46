"""Where a home is: a SQLite file path, or a PostgreSQL connection string.

`--db` and `$LOCI_DB` take either. A string starting `postgresql://` (or
`postgres://`) names a PostgreSQL database; anything else is a path to a
SQLite file, the embedded default. The test is made on the text as given and
also on the text a `pathlib.Path` leaves of it (which folds `//` into `/`),
so a connection string that went through a `type=Path` flag is still known
for what it is and never opened as a file named `postgresql:`.

Parts not yet on PostgreSQL refuse a connection string with
`NOT_ON_POSTGRES`, one line (a `UsageError`, exit 2), before they start.
`shown` gives a connection string without its password, for messages.
PostgreSQL's driver is the `postgres` extra: `need_postgres_driver` says so
in one line (a `UsageError`) before anything imports it.
"""

from __future__ import annotations

import importlib.util
import os
import re
from urllib.parse import urlsplit, urlunsplit

from loci.memory.errors import UsageError

__all__ = ["LOCI_DB", "NOT_ON_POSTGRES", "is_postgres", "need_postgres_driver", "shown"]

LOCI_DB = "LOCI_DB"
# What a part still on SQLite says to a connection string (`Store.open`, and commands that check early).
NOT_ON_POSTGRES = (
    "this command keeps its home in SQLite for now: give --db a file path. On PostgreSQL so far: "
    "loci memory add|update|forget|link|search|show|neighbors|stats|export|history|restore|import|refine"
    "|consolidate|procedures, loci run, chat, digest, jobs, feedback, serve (but --compat), tokens, ui, home copy,"
    " doctor --db and loci worker; "
    "see the page 'From one laptop to a team server'"
)
_SCHEME = re.compile(r"^postgres(?:ql)?:/", re.IGNORECASE)


def is_postgres(db: str | os.PathLike[str]) -> bool:
    """Whether `db` is a PostgreSQL connection string rather than a SQLite file path."""
    return bool(_SCHEME.match(os.fspath(db)))


def shown(url: str) -> str:
    """`url` with any password replaced by `***`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://…"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def need_postgres_driver() -> None:
    """Nothing when psycopg and its pool are installed; else a `UsageError` that says what to install."""
    if importlib.util.find_spec("psycopg") is None or importlib.util.find_spec("psycopg_pool") is None:
        raise UsageError("a PostgreSQL home needs psycopg: pip install 'loci-agent[postgres]'")
