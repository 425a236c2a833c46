"""The page as an MCP App: the recall view and a run's view, inline in a client that renders apps.

MCP Apps is the SDK's apps extension (`io.modelcontextprotocol/ui`,
`mcp.server.apps`): a tool's `_meta.ui.resourceUri` names a `ui://` resource,
an HTML document served as `text/html;profile=mcp-app`, and the host renders
it in a sandboxed frame and hands it the tool's result over postMessage.
Loci links two:

    memory_recall  ->  ui://loci/recall.html   the recalled memories, best first, with kind and score
    run_task       ->  ui://loci/run.html      the run: result, answer, turns and cited ranges

The `loci` server (servers/app.py) is a low-level `Server`, so it does what
`MCPServer(extensions=[Apps()])` would, by hand: it advertises the extension,
and for a request whose client declared it (`client_supports_apps`: the
extension with the app MIME type among its `mimeType`s) it lists the two
resources and stamps the two tools' `_meta.ui`. A client that did not
declare it is listed the tools and resources it always was. Reading a `ui://`
URI is answered whoever asks: it is a fixed document, the same for everyone.

A view is one self-contained document, made once from the page's own files
(servers/ui/static): `style.css`, `render.js` (what the page renders of a
run, and `esc`) and `mcp-app.js` (the postMessage bridge and the two views)
inlined into `mcp-app.html`. It holds no memory: what it shows is the tool
result the host hands it, or a run's record it reads through the host
(`resources/read loci://runs/N`), so it shows what the token's project holds
and nothing else, and it declares no CSP domains (the host's default: no
network). Every text it shows is escaped (`esc`), memory text included: it is
data. `loci ui` stays the full page.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, client_supports_apps
from mcp.types import Resource, Tool

__all__ = [
    "APP_META",
    "APP_MIME_TYPE",
    "APP_VIEWS",
    "EXTENSION_ID",
    "LINKS",
    "RECALL_URI",
    "RUN_URI",
    "app_html",
    "app_resources",
    "linked",
]

STATIC: Final = Path(__file__).parent / "ui" / "static"  # the page's files (servers/ui/app.py serves them)
RECALL_URI: Final = "ui://loci/recall.html"
RUN_URI: Final = "ui://loci/run.html"
LINKS: Final = {"memory_recall": RECALL_URI, "run_task": RUN_URI}
APP_VIEWS: Final = {RECALL_URI: "recall", RUN_URI: "run"}
APP_META: Final = {"ui": {"prefersBorder": True}}  # on the listing and on the read: a border, no CSP domains
_DESCRIBED: Final = {
    RECALL_URI: (
        "Loci: recalled memories",
        "What memory_recall found, best first: each memory's text, kind and score.",
    ),
    RUN_URI: ("Loci: a run", "A run of run_task: its result, answer, turns and the ranges it cited."),
}


@functools.cache
def app_html(uri: str) -> str:
    """The self-contained document of the view at `uri` (a `KeyError` for a URI Loci does not serve)."""
    view = APP_VIEWS[uri]
    template = (STATIC / "mcp-app.html").read_text(encoding="utf-8")
    parts = {name: (STATIC / name).read_text(encoding="utf-8") for name in ("style.css", "render.js", "mcp-app.js")}
    assert not any("</script" in text or "</style" in text for text in parts.values()), "an inlined file closes its tag"
    html = template.replace("/*view*/", view)
    for name, text in parts.items():
        html = html.replace(f"/*{name}*/", text)
    return html


def app_resources(ctx: Any) -> list[Resource]:
    """The `ui://` views, for a client that renders apps; none for another."""
    if not client_supports_apps(ctx):
        return []
    return [
        Resource(
            uri=uri, name=APP_VIEWS[uri], title=title, description=description, mime_type=APP_MIME_TYPE, meta=APP_META
        )
        for uri, (title, description) in _DESCRIBED.items()
    ]


def linked(ctx: Any, tools: Sequence[Tool]) -> list[Tool]:
    """`tools`, with `_meta.ui.resourceUri` on those that have a view when the client renders apps."""
    if not client_supports_apps(ctx):
        return list(tools)
    return [
        tool.model_copy(update={"meta": {**(tool.meta or {}), "ui": {"resourceUri": LINKS[tool.name]}}})
        if tool.name in LINKS
        else tool
        for tool in tools
    ]
