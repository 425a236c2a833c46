"""MCP over HTTP per project: each request is served by the app of its principal's project.

    POST /mcp           the principal's one project (the owner's: the server's `--project`)
    POST /p/NAME/mcp    project NAME, which the principal must reach (a token with several projects names one)

`ProjectApps` is the ASGI app `loci serve --http` runs. For each request it
finds the principal (servers/auth/principals.py; nobody: 401, whose
`WWW-Authenticate` says why and where a token comes from, and points at the
RFC 9728 metadata served here without a token at
`/.well-known/oauth-protected-resource[/PATH]`: servers/auth/bearer.py), picks the project
from the path (a project the principal does not reach: 403; `/mcp` for a
token of several projects: 400, naming the paths), and hands the request to
the MCP app of that project and access, made by `make(project, read_only)`
(servers/app.py `build_app`, whose every reader and writer is built for that
one project, so the limit is in each query, not only here). Each app is
started on the first request that needs it (the owner's at startup) and runs
until the server stops. Its sessions are its own: a session id opened in one
project, or with write access, is unknown to the app of another project or of
read-only access (404), so a session never carries a principal past its
limits. The session cap (`--max-sessions`) holds per app. A token that
cannot be checked because the home's database is unavailable gets 503 with
the JSON-RPC error of servers/errors.py (`Retry-After: 1`), never a 500. Beside the apps,
the lifespan runs `Principals.record_uses`, which writes the tokens' last use.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from starlette.types import Receive, Scope, Send

from loci.memory.errors import StoreUnavailable, UsageError
from loci.memory.projects import check_project
from loci.servers.auth.bearer import METADATA_PATH, challenge, protected_resource
from loci.servers.auth.principals import Principal, Principals
from loci.servers.errors import RETRY_AFTER_S, unavailable
from loci.servers.transports.thin_http import ThinHttp

__all__ = ["ProjectApps", "project_of_path"]

MakeApp = Callable[[str, bool], ThinHttp]


def project_of_path(path: str, principal: Principal) -> tuple[int, str]:
    """`(200, project)` for a path the principal may use, else `(status, reason)`."""
    if path == "/mcp":
        if len(principal.projects) == 1 and principal.projects[0] is not None:
            return 200, principal.projects[0]
        paths = ", ".join(f"/p/{p}/mcp" for p in principal.projects if p is not None)
        return 400, f"this token reaches several projects: choose one by the path ({paths})"
    head, _, rest = path.removeprefix("/p/").partition("/")
    if not path.startswith("/p/") or rest != "mcp":
        return 404, "not found: MCP is served at /mcp and /p/PROJECT/mcp"
    try:
        check_project(head)
    except UsageError as exc:
        return 404, str(exc)
    if head not in principal.projects:
        return 403, f"this token cannot reach the project {head!r}"
    return 200, head


class ProjectApps:
    """ASGI: the principal's project's MCP app for each request, started on first use."""

    def __init__(self, principals: Principals, make: MakeApp) -> None:
        self.principals = principals
        self.make = make
        self._apps: dict[tuple[str, bool], ThinHttp] = {}
        # Made by the lifespan, in the event loop that serves.
        self._group: TaskGroup | None = None
        self._starting: anyio.Lock | None = None
        self._stopping: anyio.Event | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = dict(scope.get("headers") or [])
        path = scope["path"]
        if path == METADATA_PATH or path.startswith(f"{METADATA_PATH}/"):
            resource = _base(scope, headers) + (path.removeprefix(METADATA_PATH) or "/mcp")
            await _send_json(send, 200, protected_resource(resource))
            return
        try:
            principal = await self.principals.of(headers)
        except StoreUnavailable as exc:
            await _unavailable(send, exc)
            return
        if principal is None:
            given = headers.get(b"authorization", b"").strip()
            reason = "the bearer token is wrong or revoked" if given else "this server needs a bearer token"
            await _reply(send, 401, reason, challenge(reason, _base(scope, headers) + METADATA_PATH + path))
            return
        status, found = project_of_path(scope["path"], principal)
        if status != 200:
            await _reply(send, status, found)
            return
        try:
            app = await self._app(found, principal.read_only)
        except UsageError as exc:
            await _reply(send, 403, str(exc))
            return
        await app({**scope, "path": "/mcp", "raw_path": b"/mcp"}, receive, send)

    async def _app(self, project: str, read_only: bool) -> ThinHttp:
        key = (project, read_only)
        app = self._apps.get(key)
        if app is not None:
            return app
        if self._group is None or self._starting is None:
            raise UsageError("the server is not running")
        async with self._starting:
            if key not in self._apps:
                made = self.make(project, read_only)
                await self._group.start(self._run, made, self._stopping)
                self._apps[key] = made
        return self._apps[key]

    async def _run(self, app: ThinHttp, stopping: anyio.Event, *, task_status: TaskStatus[None]) -> None:
        async with app.lifespan():
            task_status.started()
            await stopping.wait()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        self._starting, self._stopping = anyio.Lock(), anyio.Event()
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                group.start_soon(self.principals.record_uses, self._stopping)
                owner = self.principals.owner.projects[0]
                if owner is not None:
                    await self._app(owner, self.principals.owner.read_only)
                await send({"type": "lifespan.startup.complete"})
                await receive()  # lifespan.shutdown
                self._stopping.set()
        finally:
            self._group = None
        await send({"type": "lifespan.shutdown.complete"})


def _base(scope: Scope, headers: dict[bytes, bytes]) -> str:
    """The URL this request reached the server at, without its path: `http://HOST:PORT`."""
    host = headers.get(b"host", b"").decode("latin-1")
    if not host:
        name, port = scope.get("server") or ("127.0.0.1", 80)
        host = f"{name}:{port}"
    return f"{scope.get('scheme', 'http')}://{host}"


async def _reply(send: Send, status: int, reason: str, challenged: bytes | None = None) -> None:
    extra = [(b"www-authenticate", challenged)] if challenged is not None else []
    await _send_json(send, status, {"error": reason}, extra)


async def _send_json(send: Send, status: int, value: Any, extra: list[Any] | None = None) -> None:
    body = json.dumps(value).encode()
    headers: list[Any] = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


async def _unavailable(send: Send, exc: StoreUnavailable) -> None:
    """503 with the JSON-RPC error of a home whose database is unavailable (servers/errors.py): the token could not
    be checked."""
    error = unavailable(exc).error.model_dump(exclude_none=True)
    answer = {"jsonrpc": "2.0", "id": None, "error": error}
    await _send_json(send, 503, answer, [(b"retry-after", str(RETRY_AFTER_S).encode())])
