"""`loci ui`: a local web page over the home: the memory graph, runs, procedures, documents.

    loci ui                              http://127.0.0.1:8780/ over $LOCI_HOME/loci.db
    loci ui --db PATH --port 0           another home, a free port
    loci ui --host 0.0.0.0 --token-file F   off loopback: every request needs the token
    loci ui --host 0.0.0.0                  off loopback over a home with tokens: each reads its own projects

The page, its data API and its safety rules live in `servers/ui/`; this
command opens the home, a SQLite file or a PostgreSQL database (whose page
shows the memory graph, the procedures and the job queue: runs, documents and
digest jobs are kept in SQLite homes so far), `query_only` for reads (feedback is its one write)
and serves until Ctrl-C. Starlette and uvicorn are imported only when the
command runs, so `loci` itself starts without them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from loci.memory.engines.sqlite.store import default_db_path
from loci.memory.location import is_postgres
from loci.runtime.cli.flags import add_project, at_least, project_of

__all__ = ["DEFAULT_PORT", "register"]

DEFAULT_PORT = 8780


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("ui", help="serve a local web page that shows the memory graph and the runs")
    parser.add_argument(
        "--db", default=None, help="the home: a SQLite file or postgresql://... (default $LOCI_HOME/loci.db)"
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}; 0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1); others need --token-file")
    parser.add_argument("--token-file", default=None, help="a file whose first line is the session token")
    parser.add_argument(
        "--token-cache",
        type=float,
        default=None,
        help="seconds a home token's check is kept; a revoked token is refused after at most this (2; 0: at once)",
    )
    add_project(parser, every=True)
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    from loci.memory.engines.select import open_engine
    from loci.servers.auth.principals import TOKEN_CACHE_S
    from loci.servers.transports.transport import read_token
    from loci.servers.ui.serve import serve_ui, session_token

    at_least(0, token_cache=args.token_cache)
    token = read_token(None, args.token_file)
    db = _home(args.db)
    if token is not None or (isinstance(db, Path) and not db.exists()):
        session_token(token, args.host)  # a short token, or none over a new home, is refused before opening it
    async with await open_engine(db, query_only=True) as store:
        # Off loopback without a token file: refused unless the home has tokens (serve_ui asks it).
        await serve_ui(
            store,
            host=args.host,
            port=args.port,
            token=token,
            project=project_of(args),
            token_cache=TOKEN_CACHE_S if args.token_cache is None else args.token_cache,
        )
    return 0


def _home(db: str | None) -> str | Path:
    """The home to open: a connection string as given, a path expanded, or the default SQLite file."""
    if db and is_postgres(db):
        return db
    return Path(db).expanduser() if db else default_db_path()
