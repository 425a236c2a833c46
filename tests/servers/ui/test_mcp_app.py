"""The MCP App views (servers/apps.py) rendered in Debian's chromium, inside a host page as a client shows them.

The host page frames the view's HTML (read over MCP) as hosts do: a sandboxed
frame of its own origin, under the spec's default Content Security Policy (no
network), and answers the view's `ui/initialize`, then hands it a tool result
made by a real call. The recall view shows the token's project's note and not
another project's, its markup as text; the run view reads the run's record
through the host and shows its answer and turns. Nothing is fetched, and the host is
told the view's height to size its frame.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from loci.memory.engines.sqlite.store import Store
from loci.memory.records.runs import Runs
from loci.servers.app import build_app
from loci.servers.apps import RECALL_URI, RUN_URI
from tests.servers.ui.conftest import run_async

pytestmark = pytest.mark.slow

HOSTILE = 'the lantern code is <img src=x onerror="document.body.dataset.ran=1"> 4417'
# The spec's default for a view that declares no CSP domains, set in the frame as a host sets it.
CSP = (
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
    "style-src 'unsafe-inline'; img-src data:; connect-src 'none'\">"
)
HOST = """([html, toolResult, resources]) => {
  const frame = document.createElement("iframe");
  const send = (message) => frame.contentWindow.postMessage({ jsonrpc: "2.0", ...message }, "*");
  frame.sandbox = "allow-scripts";
  window.addEventListener("message", (event) => {
    const m = event.data;
    if (event.source !== frame.contentWindow) return;
    if (m.method === "ui/notifications/size-changed") window.viewHeight = m.params.height;
    if (m.method === "ui/initialize") send({ id: m.id, result: {
      protocolVersion: "2026-01-26", hostInfo: { name: "test-host", version: "1" },
      hostCapabilities: resources ? { serverResources: {} } : {}, hostContext: { displayMode: "inline" } } });
    if (m.method === "resources/read") send({ id: m.id, result: resources[m.params.uri] });
    const result = { method: "ui/notifications/tool-result", params: toolResult };
    if (m.method === "ui/notifications/initialized") send(result);
  });
  frame.srcdoc = html;
  document.body.append(frame);
}"""


async def _recall_view(db: Path) -> tuple[str, dict[str, Any]]:
    async with await Store.open(db) as store:
        async with Client(build_app(store, ["memory"], project="b")) as other:
            await other.call_tool("memory_remember", {"text": "the lantern code of project b is 9999"})
        async with Client(build_app(store, ["memory"], project="a")) as client:
            await client.call_tool("memory_remember", {"text": HOSTILE})
            html = (await client.read_resource(RECALL_URI)).contents[0].text
            recalled = await client.call_tool("memory_recall", {"query": "lantern code"})
    return html, recalled.model_dump(mode="json", by_alias=True, exclude_none=True)


async def _run_view(db: Path) -> tuple[str, dict[str, Any], dict[str, Any]]:
    async with await Store.open(db) as store:
        runs = Runs(store)
        run_id = await runs.start("where is the lantern?", model="scripted", source="mcp")
        turns = [{"turn": 1, "tool": "context_search", "arguments": {"query": "<b>lantern</b>"}, "result_tokens": 12}]
        await runs.finish(run_id, status="done", answer="on the harbour wall", turns=turns, tokens=40)
        async with Client(build_app(store, ["memory"])) as client:
            html = (await client.read_resource(RUN_URI)).contents[0].text
            record = await client.read_resource(f"loci://runs/{run_id}")
    answered = {"run": f"run:{run_id}", "answer": "on the harbour wall", "status": "done", "turns": 1}
    result = {"content": [{"type": "text", "text": json.dumps(answered)}], "structuredContent": answered}
    resources = {f"loci://runs/{run_id}": record.model_dump(mode="json", by_alias=True, exclude_none=True)}
    return html, result, resources


def _shown(browser: Any, html: str, result: dict[str, Any], resources: dict[str, Any] | None, view: str) -> Any:
    """The view's frame once it has shown `result`, with what the page asked the network for and what it said."""
    context = browser.new_context()  # no CSP bypass: the frame's policy holds
    page = context.new_page()
    page.set_default_timeout(30_000)
    asked: list[str] = []
    said: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.on("console", lambda message: said.append(message.text))
    page.set_content("<!doctype html><title>host</title><body></body>")
    page.evaluate(HOST, [html.replace("<head>", "<head>" + CSP, 1), result, resources])
    frame = page.wait_for_selector("iframe").content_frame()
    frame.wait_for_selector(f"body[data-shown={view}]", state="attached")
    return context, frame, asked, said


def test_the_recall_view_shows_the_recalled_note_as_text(browser: Any, tmp_path: Path) -> None:
    html, recalled = run_async(_recall_view, tmp_path / "loci.db")
    context, frame, asked, said = _shown(browser, html, recalled, None, "recall")
    try:
        hits = frame.inner_text("#hits")
        images, ran = frame.locator("img").count(), frame.evaluate("document.body.dataset.ran")
        shown_height = frame.evaluate("document.documentElement.scrollHeight")
        told = frame.page.wait_for_function(f"window.viewHeight === {shown_height}").json_value()
    finally:
        context.close()
    assert HOSTILE in hits and "mem:" in hits  # the note, its markup shown as the text it is
    assert images == 0 and ran is None
    assert "9999" not in hits  # project b's note: not the token's project, never recalled
    assert asked == [] and not [line for line in said if "Content Security Policy" in line]
    assert told is True  # the host was told the view's height, to size its frame


def test_the_run_view_reads_the_runs_record_through_the_host(browser: Any, tmp_path: Path) -> None:
    html, result, resources = run_async(_run_view, tmp_path / "loci.db")
    context, frame, asked, _ = _shown(browser, html, result, resources, "run")
    try:
        title, answer, turns = frame.inner_text("#run-title"), frame.inner_text("#answer"), frame.inner_text("#turns")
    finally:
        context.close()
    assert title == "run:1: where is the lantern?" and answer == "on the harbour wall"
    assert "context_search" in turns and '{"query":"<b>lantern</b>"}' in turns  # read from the record, not the result
    assert asked == []
