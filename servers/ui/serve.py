"""Serving the page: uvicorn on a socket that listens before the URL is printed.

`serve_ui` binds first (port 0 picks a free port), prints the page's URL
once, on stdout, and then serves until interrupted. The URL carries the
session token in its fragment (`#token=...`): a browser never sends a
fragment to the server, so the token stays out of every log, and the page
reads it from there to sign its POSTs. Without `--token-file` the token is
made fresh for each `loci ui`; with one, that token is also required for
every read. A bind off loopback refuses to start without a token file (or a
home with tokens, `loci tokens`), or with a token shorter than 16 characters
(the rules of `loci serve --http`). Once the home has tokens, each one reads
its own projects on the page (servers/ui/app.py), and every read needs a
token: the session token, as the URL gives it, or the home's.
uvicorn runs without an access log, so no header is ever printed.
"""

from __future__ import annotations

import copy
import secrets
import socket
import sys

from loci.memory.engines.base import Engine
from loci.memory.projects import DEFAULT_PROJECT
from loci.memory.records.tokens import Tokens
from loci.servers.auth.bearer import check_bind, is_loopback
from loci.servers.auth.principals import TOKEN_CACHE_S
from loci.servers.ui.app import build_ui_app

__all__ = ["serve_ui", "session_token"]


def session_token(given: str | None, host: str, *, home_tokens: bool = False) -> tuple[str, bool]:
    """`(token, required for reads)`: the given token, or a fresh one that only writes need (on loopback; off it,
    over a home with tokens, every read needs a token too).

    The token rules are `loci serve --http`'s (`check_bind`): off loopback, a token of at least 16 characters, or
    a home with tokens."""
    check_bind(host, given, home_tokens=home_tokens)
    if given is not None:
        return given, True
    return secrets.token_urlsafe(24), not is_loopback(host)


async def serve_ui(
    store: Engine,
    *,
    host: str,
    port: int,
    token: str | None,
    project: str | None = DEFAULT_PROJECT,
    token_cache: float = TOKEN_CACHE_S,
) -> None:
    import uvicorn

    secret, for_reads = session_token(token, host, home_tokens=await Tokens(store).any())
    app = build_ui_app(
        store, host=host, token=secret, token_for_reads=for_reads, project=project, token_cache=token_cache
    )
    logs = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    logs["handlers"]["access"]["stream"] = "ext://sys.stderr"
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, log_config=logs)
    listening = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    bound_host, bound_port = listening.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    print(f"loci: the page is at http://{shown}:{bound_port}/#token={secret}", file=sys.stdout, flush=True)
    await uvicorn.Server(config).serve(sockets=[listening])
