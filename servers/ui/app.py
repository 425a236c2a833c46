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
    POST /api/runs/N/feedback      {"outcome": "good"|"bad"|0.7, "note": "..."}: as `loci feedback`

Every route reads through a `query_only` store, so a read cannot write; the
feedback POST is the one write. Loci's errors become JSON with a status: a
user's mistake or an unknown id 400 or 404, with the same one-line message
the command line prints. `Guard` (servers/ui/guard.py) wraps it all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from memory.context.store import ContextStore
from memory.errors import LociError, NotFoundError, ToolError, UsageError
from memory.graph.graph import Graph
from memory.json_input import loads
from memory.projects import DEFAULT_PROJECT
from memory.store import Store
from servers.ui.documents_view import LISTED_RECORDS, DocumentsView
from servers.ui.graph_view import DEFAULT_DRAWN, GraphView
from servers.ui.guard import MAX_POST_BYTES, Guard
from servers.ui.runs_view import RunsView
from servers.ui.work_view import WorkView
from tools.context import ContextTools

__all__ = ["STATIC", "build_ui_app"]

STATIC = Path(__file__).parent / "static"


def _int(request: Request, name: str, default: int) -> int:
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{name} must be a whole number, not {text[:20]!r}") from None


def _status(exc: LociError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    return 400 if isinstance(exc, UsageError | ToolError) else 500


class Api:
    """The JSON routes, over the views of one project of a store (`ALL`: of every project)."""

    def __init__(self, store: Store, project: str | None = DEFAULT_PROJECT) -> None:
        graph = Graph(store, project=project)
        self.graph = GraphView(graph)
        self.runs = RunsView(graph)
        self.work = WorkView(graph)
        self.documents = DocumentsView(graph)
        self.context = ContextTools(ContextStore(store, project=project))

    def routes(self) -> list[Route]:
        table: dict[str, Any] = {
            "/api/graph": lambda r: self.graph.top(_int(r, "limit", DEFAULT_DRAWN)),
            "/api/totals": lambda r: self.graph.totals(),
            "/api/recall": lambda r: self.graph.recall(
                r.query_params.get("q", ""), _int(r, "k", 20), _int(r, "limit", DEFAULT_DRAWN)
            ),
            "/api/around/{ref}": lambda r: self.graph.around(
                r.path_params["ref"], _int(r, "depth", 1), _int(r, "limit", DEFAULT_DRAWN)
            ),
            "/api/node/{ref}": lambda r: self.graph.node(r.path_params["ref"]),
            "/api/runs": lambda r: self.runs.list(_int(r, "limit", 200)),
            "/api/runs/{ref}": lambda r: self.runs.get(r.path_params["ref"]),
            "/api/procedures": lambda r: self.work.procedures(),
            "/api/jobs": lambda r: self.work.queue(),
            "/api/digests": lambda r: self.work.digest_jobs(),
            "/api/documents": lambda r: self.documents.documents(),
            "/api/records": lambda r: self.documents.records(_int(r, "limit", LISTED_RECORDS)),
            "/api/outline/{ref}": lambda r: self.context.context_outline(r.path_params["ref"]),
            "/api/read/{ref}": lambda r: self.context.context_read(
                r.path_params["ref"], _int(r, "start", 1), _int(r, "end", 0) or None
            ),
        }
        routes = [Route(path, _json_route(fn), methods=["GET"]) for path, fn in table.items()]
        routes.append(Route("/api/runs/{ref}/feedback", _json_route(self.feedback), methods=["POST"]))
        return routes

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
    store: Store,
    *,
    host: str,
    token: str,
    token_for_reads: bool,
    max_body: int = MAX_POST_BYTES,
    project: str | None = DEFAULT_PROJECT,
) -> Guard:
    """The whole page: its files, the API over one project of `store`, behind the `Guard`."""
    routes = [
        Route("/", _index, methods=["GET"]),
        *Api(store, project).routes(),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    return Guard(app, host=host, token=token, token_for_reads=token_for_reads, max_body=max_body)
