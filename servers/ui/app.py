"""The page's Starlette app: static files and a small JSON API over one home.

    GET  /                         the page (static/index.html) and its files under /static/
    GET  /api/graph?limit=N        the most used nodes and the edges between them
    GET  /api/totals               how many live memories and links the home holds
    GET  /api/recall?q=...&k=N     what memory_recall returns, with the edges it spread along
    GET  /api/around/mem:N         a node and its neighbours
    GET  /api/node/mem:N           a node: text, metadata, neighbours, history with causes
    GET  /api/runs, /api/runs/N    the runs; one run with its turns, evidence lines and episode
    GET  /api/procedures, /api/jobs, /api/digests
    GET  /api/documents            every document, with the path it was read from
    GET  /api/records?limit=N      what runs recorded (tool results, turns, notes), newest first
    GET  /api/outline/ID, /api/read/ID?start=A&end=B
    GET  /api/projects             the projects the request's principal reaches
    POST /api/runs/N/feedback      {"outcome": "good"|"bad"|0.7, "note": "..."}: as `loci feedback`

Every route reads through a `query_only` store, so a read cannot write; the
feedback POST is the one write. Loci's errors become JSON with a status: a
user's mistake or an unknown id 400 or 404, with the same one-line message
the command line prints. `Guard` (servers/ui/guard.py) wraps it all, and puts
the request's principal (servers/auth/principals.py) in its scope's state.

A route is answered by the `Api` of one project, built for it: the project
the `X-Loci-Project` header names, which the principal must reach (else 403),
or the principal's first. So a token of project `a` reads `a`'s views only,
in their own queries; the page lists the principal's projects and sends the
one chosen.

The home is on either engine (memory/engines/base.py `Engine`), and every
route is served on both: the views' SQL is the same on both engines.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from loci.memory.context.store import ContextStore
from loci.memory.engines.base import Engine
from loci.memory.errors import LociError, NotFoundError, ToolError, UsageError
from loci.memory.graph.graph import Graph
from loci.memory.json_input import loads
from loci.memory.projects import DEFAULT_PROJECT, check_project
from loci.memory.records.tokens import Principal
from loci.servers.auth.principals import TOKEN_CACHE_S, Principals
from loci.servers.ui.documents_view import LISTED_RECORDS, DocumentsView
from loci.servers.ui.graph_view import DEFAULT_DRAWN, GraphView
from loci.servers.ui.guard import MAX_POST_BYTES, Guard
from loci.servers.ui.runs_view import RunsView
from loci.servers.ui.work_view import WorkView
from loci.tools.context import ContextTools

__all__ = ["PROJECT_HEADER", "STATIC", "build_ui_app"]

STATIC = Path(__file__).parent / "static"
PROJECT_HEADER = "x-loci-project"
MAX_APIS = 256


def _int(request: Request, name: str, default: int) -> int:
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{name} must be a whole number, not {text[:20]!r}") from None


def _status(exc: LociError) -> int:
    if isinstance(exc, Forbidden):
        return 403
    if isinstance(exc, NotFoundError):
        return 404
    return 400 if isinstance(exc, UsageError | ToolError) else 500


class Forbidden(UsageError):
    """The principal does not reach what the request asks for (403)."""


class Api:
    """The JSON routes, over the views of one project of a store (`ALL`: of every project)."""

    def __init__(self, store: Engine, project: str | None = DEFAULT_PROJECT) -> None:
        graph = Graph(store, project=project)
        self.graph = GraphView(graph)
        self.runs = RunsView(graph)
        self.work = WorkView(graph)
        self.documents = DocumentsView(graph)
        self.context = ContextTools(ContextStore(store, project=project))

    async def feedback(self, request: Request) -> dict[str, Any]:
        try:
            body = loads(await request.body() or b"{}")
        except ValueError:
            raise UsageError('the feedback is a JSON object: {"outcome": "good", "note": "..."}') from None
        if not isinstance(body, dict) or "outcome" not in body:
            raise UsageError("the feedback needs an outcome: good, bad or a number between 0 and 1")
        note = body.get("note") or ""
        if not isinstance(note, str):
            raise UsageError("the feedback's note is text")
        return await self.runs.feedback(request.path_params["ref"], body["outcome"], note)


# The GET routes: path -> what answers it, from the request's project's `Api` and the request.
GETS: dict[str, Callable[[Api, Request], Awaitable[Any]]] = {
    "/api/graph": lambda a, r: a.graph.top(_int(r, "limit", DEFAULT_DRAWN)),
    "/api/totals": lambda a, r: a.graph.totals(),
    "/api/recall": lambda a, r: a.graph.recall(
        r.query_params.get("q", ""), _int(r, "k", 20), _int(r, "limit", DEFAULT_DRAWN)
    ),
    "/api/around/{ref}": lambda a, r: a.graph.around(
        r.path_params["ref"], _int(r, "depth", 1), _int(r, "limit", DEFAULT_DRAWN)
    ),
    "/api/node/{ref}": lambda a, r: a.graph.node(r.path_params["ref"]),
    "/api/runs": lambda a, r: a.runs.list(_int(r, "limit", 200)),
    "/api/runs/{ref}": lambda a, r: a.runs.get(r.path_params["ref"]),
    "/api/procedures": lambda a, r: a.work.procedures(),
    "/api/jobs": lambda a, r: a.work.queue(),
    "/api/digests": lambda a, r: a.work.digest_jobs(),
    "/api/documents": lambda a, r: a.documents.documents(),
    "/api/records": lambda a, r: a.documents.records(_int(r, "limit", LISTED_RECORDS)),
    "/api/outline/{ref}": lambda a, r: a.context.context_outline(r.path_params["ref"]),
    "/api/read/{ref}": lambda a, r: a.context.context_read(
        r.path_params["ref"], _int(r, "start", 1), _int(r, "end", 0) or None
    ),
}


class ProjectApis:
    """One `Api` per project, made when first asked for; each request answered by its principal's project's."""

    def __init__(self, store: Engine) -> None:
        self.store = store
        self._apis: dict[str | None, Api] = {}

    def api(self, request: Request) -> Api:
        principal: Principal = request.state.principal
        project = self.project(principal, request.headers.get(PROJECT_HEADER))
        if project not in self._apis:
            if len(self._apis) >= MAX_APIS:
                self._apis.clear()
            self._apis[project] = Api(self.store, project)
        return self._apis[project]

    @staticmethod
    def project(principal: Principal, asked: str | None) -> str | None:
        """The project a request reads: the one it asks for, which the principal must reach, else its first."""
        if not asked:
            return principal.projects[0]
        check_project(asked)
        if asked not in principal.projects and None not in principal.projects:
            raise Forbidden(f"this token cannot reach the project {asked!r}")
        return asked

    def routes(self) -> list[Route]:
        routes = [Route("/api/projects", _json_route(self._projects), methods=["GET"])]
        routes += [Route(path, self._endpoint(fn), methods=["GET"]) for path, fn in GETS.items()]
        routes.append(Route("/api/runs/{ref}/feedback", self._endpoint(Api.feedback), methods=["POST"]))
        return routes

    def _endpoint(self, fn: Callable[[Api, Request], Awaitable[Any]]) -> Any:
        return _json_route(lambda request: fn(self.api(request), request))

    async def _projects(self, request: Request) -> dict[str, Any]:
        principal: Principal = request.state.principal
        named = [p for p in principal.projects if p is not None]
        return {"projects": named, "all": None in principal.projects, "read_only": principal.read_only}


def _json_route(fn: Any) -> Any:
    async def endpoint(request: Request) -> Response:
        try:
            result = await fn(request)
        except LociError as exc:
            return JSONResponse({"error": str(exc)}, status_code=_status(exc))
        return JSONResponse(result)

    return endpoint


async def _index(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers={"cache-control": "no-store"})


def build_ui_app(
    store: Engine,
    *,
    host: str,
    token: str,
    token_for_reads: bool,
    max_body: int = MAX_POST_BYTES,
    project: str | None = DEFAULT_PROJECT,
    token_cache: float = TOKEN_CACHE_S,
) -> Guard:
    """The whole page: its files, and the API over the projects of each request's principal, behind the `Guard`.

    The owner (the session `token`, and without `token_for_reads` a read that carries none, while the home has no
    tokens) reads `project` (`ALL`: every project); a home token reads its own projects."""
    routes = [
        Route("/", _index, methods=["GET"]),
        *ProjectApis(store).routes(),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    owner = Principal("owner", (project,))
    principals = Principals(store, owner, token=token, open_without_token=not token_for_reads, expiry=token_cache)
    return Guard(app, host=host, principals=principals, max_body=max_body)
