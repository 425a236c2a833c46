"""The `loci` MCP server: the built-in tool sets and the `loci://` resources behind one endpoint.

`loci serve` offers one server, so an MCP client configures one entry. It is
a low-level `Server` (the SDK's public API) that routes by name: each tool
set stays its own `MCPServer` (built by a factory in `TOOL_SETS`), asked for
its tools and called through its public `list_tools` and `call_tool`.
Resources (`servers.resources`, with completion of their ids), the logging
capability (`logging/setLevel`, `servers.client_log`) and an empty prompt
list are served here too, as are what the 2026-07-28 revision adds: caching
hints on every read (`servers.caching`), a confirmation before a call that
forgets or restores (`servers.confirm`), and `subscriptions/listen` streams
of the project's changes, made by any server on the home (`servers.live`),
long calls as tasks on the job queue for a client that declares the
tasks extension (`servers.tasks`), and the page's recall and run views as
MCP Apps for a client that renders them (`servers.apps`). A request the
home's database cannot serve now (`StoreUnavailable`) is answered with the
JSON-RPC error that says so (`servers.errors.unavailable`), from a tool, a
resource, a completion or the confirmation gate alike.

The server's lifespan opens the SQLite home (or borrows the open home it is
given, on either engine), builds the tool sets over it
(noting each tool's input schema, which the HTTP transport looks up by name
on every call), and closes both when the last client is gone (once per stdio connection,
once for the whole HTTP app). A tool set is a name and a factory
`(LociState) -> MCPServer`; `build_app` is given the ones it may serve
(`tool_sets`, the built-in `BUILT_IN` unless told; `loci serve` adds the
runtime's `run` and `digest`), and `tools` picks among them.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.subscriptions import ListenHandler
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    ResourceTemplateReference,
    TextContent,
    TextResourceContents,
)

from loci.memory.context.paths import Roots
from loci.memory.context.store import ContextStore
from loci.memory.engines.base import Engine
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import LociError, StoreUnavailable
from loci.memory.projects import DEFAULT_PROJECT, check_project
from loci.servers.apps import APP_META, APP_MIME_TYPE, APP_VIEWS, EXTENSION_ID, app_html, app_resources, linked
from loci.servers.caching import METHOD_HINTS, read_hint
from loci.servers.client_log import ClientLog
from loci.servers.confirm import Confirmations
from loci.servers.context import build_context_server
from loci.servers.errors import answers_unavailable, unavailable
from loci.servers.live import CHANGES_URI, LiveMemory, changes_resource, read_changes
from loci.servers.memory import memory_server_for
from loci.servers.resources import Resources
from loci.servers.tasks import LociTasks, TaskRunner, install
from loci.servers.tool_sets import READ_TOOLS, parse_tools
from loci.servers.tracing import untraced
from loci.tools.context import ContextTools
from loci.tools.loading import LoadingTools

__all__ = ["BUILT_IN", "LociState", "ToolSetFactory", "build_app"]

log = logging.getLogger("loci.server")

INSTRUCTIONS = (
    "Loci: browse loaded documents by id and range (context_*), and keep a long-term memory graph "
    "(memory_*): remember facts, recall them ranked with the reasons, link and forget them."
)


@dataclass
class LociState:
    """What the lifespan opened: the home, its context store, and the tool sets built over them.

    `options` are the command line's settings for tool sets that need them (`model`, `mcp_config`);
    a factory closes what it opens by pushing it on `stack`, which the lifespan unwinds."""

    store: Store
    contexts: ContextStore
    roots: Roots
    project: str
    read_only: bool
    log: ClientLog
    stack: AsyncExitStack
    options: Mapping[str, Any] = field(default_factory=dict)
    sets: dict[str, MCPServer] = field(default_factory=dict)
    routes: dict[str, MCPServer] = field(default_factory=dict)
    tasks: TaskRunner = field(default_factory=TaskRunner)


ToolSetFactory = Callable[[LociState], MCPServer | Awaitable[MCPServer]]


def _context_set(state: LociState) -> MCPServer:
    return build_context_server(ContextTools(state.contexts), LoadingTools(state.contexts))


def _memory_set(state: LociState) -> MCPServer:
    return memory_server_for(state.store, project=state.project)


# The tool sets of this package, by name; the runtime's own (`run`, `digest`) are given beside them by `loci serve`.
BUILT_IN: Mapping[str, ToolSetFactory] = {"context": _context_set, "memory": _memory_set}


def build_app(
    home: Engine | str | Path,
    tools: Sequence[str] = ("context", "memory"),
    *,
    tool_sets: Mapping[str, ToolSetFactory] = BUILT_IN,
    roots: Sequence[str | Path] = (),
    options: Mapping[str, Any] | None = None,
    name: str = "loci",
    version: str = "",
    project: str = DEFAULT_PROJECT,
    read_only: bool = False,
) -> Server[LociState]:
    """The merged server over one project of `home` (a path the lifespan opens and closes, or an open store it
    borrows): its tools and resources see that project's memories, documents and runs only. `tools` names the
    sets it serves, among `tool_sets`; `version` is the `serverInfo.version` a client is told. A `read_only`
    server lists and calls only `READ_TOOLS`: another tool's call is an error result saying so."""
    check_project(project)
    factories = dict(tool_sets)
    chosen = parse_tools(list(tools), list(factories))
    allowed = Roots(roots) if roots else Roots(None)
    client_log = ClientLog()
    # Each tool's input schema, by name, as the lifespan found it: the streamable HTTP transport checks a call's
    # `Mcp-Param-*` headers against it, and without this lookup it would list every tool to find it, per call.
    schemas: dict[str, Mapping[str, Any]] = {}
    live = LiveMemory()  # what `subscriptions/listen` streams hear: the project's changes, made by any server

    @asynccontextmanager
    async def lifespan(_: Server[LociState]) -> AsyncIterator[LociState]:
        async with AsyncExitStack() as stack:
            store = await _borrowed_or_opened(home, stack)
            contexts = ContextStore(store, roots=allowed.roots, project=project)
            state = LociState(store, contexts, allowed, project, read_only, client_log, stack, dict(options or {}))
            for part in chosen:
                built = factories[part](state)
                server = await built if isinstance(built, Awaitable) else built
                state.sets[part] = server
                for tool in await server.list_tools():
                    state.routes.setdefault(tool.name, server)
                    schemas.setdefault(tool.name, tool.input_schema)
            watching = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(watching.cancel_scope.cancel)
            watching.start_soon(live.watch, store, project)
            watching.start_soon(state.tasks.serve, store, project, state.routes)
            yield state

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)  # the logging capability, deprecated in 2026-07-28
        server = Server(
            name,
            version=version,
            instructions=INSTRUCTIONS,
            cache_hints=METHOD_HINTS,
            lifespan=lifespan,
            get_tool_input_schema=schemas.get,
            on_list_tools=_list_tools,
            on_call_tool=_call_tool,
            on_list_resources=_list_resources,
            on_list_resource_templates=_list_templates,
            on_read_resource=_read_resource,
            on_subscriptions_listen=ListenHandler(live),
            on_set_logging_level=client_log.set_level,
            on_list_prompts=_list_prompts,
            on_completion=_complete,
        )
    # The `requestState` of a confirmation (servers/confirm.py) goes out sealed and comes back checked, as
    # `MCPServer` arranges for itself; the key is this process's, so a second round reaches the same server.
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=name))
    server.extensions[EXTENSION_ID] = {}  # MCP Apps: the recall and run views (servers/apps.py)
    install(server, LociTasks())  # long calls as tasks, for a client that declares the extension (servers/tasks.py)
    return untraced(server)


async def _borrowed_or_opened(home: Engine | str | Path, stack: AsyncExitStack) -> Any:
    """The home given open (on either engine: the caller's to close), or the SQLite file at a path, opened and
    closed with `stack`."""
    if not isinstance(home, str | Path):
        return home
    store = await Store.open(home)
    stack.callback(store.close)
    return store


async def _list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
    state: LociState = ctx.lifespan_context
    tools = [tool for server in state.sets.values() for tool in await server.list_tools()]
    if state.read_only:
        tools = [tool for tool in tools if tool.name in READ_TOOLS]
    return ListToolsResult(tools=linked(ctx, tools))


@answers_unavailable
async def _call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult | InputRequiredResult:
    state: LociState = ctx.lifespan_context
    server = state.routes.get(params.name)
    if server is None:
        return _error(f"Unknown tool: {params.name}")
    if state.read_only and params.name not in READ_TOOLS:
        return _error(f"{params.name} writes to the home, and this token is read-only")
    context = Context(request_context=ctx, mcp_server=server, input_params=params)
    try:
        arguments = await Confirmations(state.store, state.project).gate(context, params.name, params.arguments or {})
        if not isinstance(arguments, dict):
            return arguments
        result = await server.call_tool(params.name, arguments, context)
    except MCPError:
        raise
    except UnexpectedToolError as exc:
        if isinstance(exc.__cause__, StoreUnavailable):  # a tool not wrapped in `readable_errors`
            raise unavailable(exc.__cause__) from exc
        log.error("tool %s crashed", params.name, exc_info=exc.__cause__ or exc)
        return _error(str(exc))
    except ToolError as exc:
        return _error(str(exc))
    return result


def _resources(ctx: Any) -> Resources:
    state: LociState = ctx.lifespan_context
    return Resources(state.store, state.project)


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


@answers_unavailable
async def _list_resources(ctx: Any, params: PaginatedRequestParams | None) -> ListResourcesResult:
    listed = [changes_resource(), *await _resources(ctx).list(), *app_resources(ctx)]
    return ListResourcesResult(resources=listed)


async def _list_templates(ctx: Any, params: PaginatedRequestParams | None) -> ListResourceTemplatesResult:
    return ListResourceTemplatesResult(resource_templates=Resources.templates())


async def _read_resource(ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult:
    uri = str(params.uri)
    try:
        if uri == CHANGES_URI:
            text, mime_type = (
                await read_changes(ctx.lifespan_context.store, ctx.lifespan_context.project),
                "application/json",
            )
        elif uri in APP_VIEWS:
            text, mime_type = app_html(uri), APP_MIME_TYPE
        else:
            text, mime_type = await _resources(ctx).read(uri)
    except StoreUnavailable as exc:
        raise unavailable(exc) from exc
    except LociError as exc:
        raise MCPError(code=INVALID_PARAMS, message=str(exc), data={"uri": uri}) from exc
    hint = read_hint(uri)
    meta = APP_META if uri in APP_VIEWS else None
    contents = [TextResourceContents(uri=uri, text=text, mime_type=mime_type, meta=meta)]
    return ReadResourceResult(contents=contents, ttl_ms=hint.ttl_ms, cache_scope=hint.scope)


async def _list_prompts(ctx: Any, params: PaginatedRequestParams | None) -> ListPromptsResult:
    return ListPromptsResult(prompts=[])  # Loci offers tools and resources; no prompts


@answers_unavailable
async def _complete(ctx: Any, params: CompleteRequestParams) -> CompleteResult:
    """Complete the `{id}` of a `loci://` resource template; nothing else has completions."""
    values: list[str] = []
    if isinstance(params.ref, ResourceTemplateReference) and params.argument.name == "id":
        values = await _resources(ctx).complete(params.ref.uri, params.argument.value)
    return CompleteResult(completion=Completion(values=values, total=len(values), has_more=False))
