"""`loci serve` over stdio, as an MCP client launches it: tools, resources, logging, subsets, config; the
server of every tool set on either engine (`home`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import LoggingMessageNotificationParams, ResourceTemplateReference

from tests.runtime.cli_helpers import script


def serve(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "loci.runtime.cli.main", "serve", *args])


async def test_compat_server_over_stdio_answers_the_reference_tools(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with Client(serve("memory", "--compat", "--db", str(tmp_path / "m.db"))) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            entity = {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}
            await client.call_tool("create_entities", {"entities": [entity]})
            found = await client.call_tool("search_nodes", {"query": "Ada"})
    assert {"create_entities", "search_nodes", "open_nodes", "read_graph"} <= names
    assert "Ada" in found.content[0].text and not found.is_error


async def test_the_full_server_over_stdio_runs_tasks_remembers_and_serves_resources(tmp_path: Path, home: str) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "shed.md").write_text("# Shed\nThe shed code is 4417.\nIt changes monthly.\n", encoding="utf-8")
    model = script(
        tmp_path,
        [
            {"state": "", "tool": "context_read", "arguments": {"id": "doc:1"}},
            {"state": "", "answer": "4417", "evidence": [{"id": "doc:1", "start": 2, "end": 2}]},
        ],
    )
    args = ["--db", home, "--root", str(root), "--model", model]
    with anyio.fail_after(120):
        async with Client(serve(*args)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            ran = await client.call_tool("run_task", {"task": "What is the shed code?", "files": ["shed.md"]})
            found = await client.call_tool("context_search", {"query": "shed code"})
            made = await client.call_tool("memory_remember", {"text": "The shed code is 4417"})
            recalled = await client.call_tool("memory_recall", {"query": "shed code"})
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
            templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
            fact = made.structured_content["id"]
            memory = await client.read_resource(f"loci://memory/{fact}")
            run = await client.read_resource(f"loci://runs/{ran.structured_content['run'].removeprefix('run:')}")
            line = await client.read_resource("loci://context/doc:1:2-2")
            whole = await client.read_resource("loci://context/doc:1")
            context_ref = ResourceTemplateReference(type="ref/resource", uri="loci://context/{id}")
            completed = await client.complete(context_ref, {"name": "id", "value": "doc"})
            prompts = await client.list_prompts()
    assert {"context_read", "context_search", "memory_recall", "memory_remember", "run_task", "digest"} <= names
    assert not ran.is_error and ran.structured_content["answer"] == "4417"
    assert ran.structured_content["status"] == "done" and ran.structured_content["evidence"][0]["id"] == "doc:1"
    assert not found.is_error and "doc:1" in found.content[0].text
    # The run left its episode first (mem:1), so the remembered fact comes after it.
    assert fact == "mem:2"
    assert recalled.structured_content["result"][0]["id"] == fact
    assert "loci://context/doc:1" in listed and f"loci://memory/{fact}" in listed
    assert {"loci://context/{id}", "loci://memory/{id}", "loci://runs/{id}"} <= templates
    assert (
        json.loads(memory.contents[0].text)["text"]
        == '<stored-notes source="loci">The shed code is 4417</stored-notes>'
    )
    record = json.loads(run.contents[0].text)
    assert record["status"] == "done" and record["source"] == "mcp" and record["answer"] == "4417"
    assert [turn.get("tool") for turn in record["turns"]] == ["context_read", None]
    assert "loci://runs/1" in listed
    assert line.contents[0].text.strip() == "The shed code is 4417."
    assert whole.contents[0].text.startswith("# Shed")
    assert completed.completion.values == ["doc:1"] and prompts.prompts == []


async def test_a_missing_resource_is_a_clear_error(tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    with anyio.fail_after(60):
        async with Client(serve("--db", str(tmp_path / "m.db"))) as client:
            errors = []
            for uri in ("loci://memory/mem:404", "loci://context/doc:9", "loci://nothing/1"):
                try:
                    await client.read_resource(uri)
                except MCPError as exc:
                    errors.append(str(exc))
    assert len(errors) == 3
    assert "no memory mem:404" in errors[0] and "doc:9" in errors[1] and "loci://context/doc:3" in errors[2]


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_logging_set_level_filters_what_reaches_the_client(tmp_path: Path) -> None:
    model = script(
        tmp_path, [{"state": "", "answer": "first", "evidence": []}, {"state": "", "answer": "second", "evidence": []}]
    )
    received: list[LoggingMessageNotificationParams] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        received.append(params)

    params = serve("--db", str(tmp_path / "m.db"), "--model", model)
    with anyio.fail_after(120):
        async with Client(params, logging_callback=on_log, mode="legacy") as client:
            assert client.server_capabilities.logging is not None
            await client.set_logging_level("warning")
            await client.call_tool("run_task", {"task": "say hi"})
            quiet = list(received)
            await client.set_logging_level("info")
            await client.call_tool("run_task", {"task": "say hi again"})
    assert quiet == []
    assert [p.level for p in received] == ["info"] and "turn 1" in str(received[0].data)


async def test_tools_picks_a_subset(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with Client(serve("--tools", "memory", "--db", str(tmp_path / "m.db"))) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            outside = await client.call_tool("context_list", {})
    assert names and all(name.startswith("memory_") for name in names)
    assert outside.is_error and "Unknown tool" in outside.content[0].text


@pytest.mark.parametrize("early", ["1", "0"])
async def test_the_memory_tool_set_over_stdio_keeps_its_home_in_postgresql(
    tmp_path: Path, postgres_url: str, early: str
) -> None:
    import psycopg

    launched = serve("memory", "--db", postgres_url)
    launched.env = {**os.environ, "LOCI_SERVE_EARLY": early}
    with anyio.fail_after(60):
        async with Client(launched) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            added = await client.call_tool("memory_remember", {"text": "the harbour key hangs by the door"})
            recalled = await client.call_tool("memory_recall", {"query": "harbour key"})
            listed = await client.list_resources()
    assert names and all(name.startswith("memory_") for name in names)
    assert not added.is_error and "harbour key" in json.dumps(recalled.structured_content)
    assert [str(r.uri) for r in listed.resources] == [
        "loci://memory/changes",
        f"loci://memory/{added.structured_content['id']}",
    ]
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT text FROM memory_nodes").fetchall() == [("the harbour key hangs by the door",)]
    assert list(tmp_path.iterdir()) == []


def loci(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "loci.runtime.cli.main", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_an_unknown_tool_set_is_a_usage_error(tmp_path: Path) -> None:
    done = loci("serve", "--tools", "context,dreams", "--db", str(tmp_path / "m.db"))
    assert done.returncode == 2 and "unknown tool set dreams" in done.stderr


def test_print_config_gives_a_snippet_that_launches_this_server(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    done = loci("serve", "--print-config", "--db", str(tmp_path / "m.db"), "--root", str(root))
    vscode = loci("serve", "--print-config", "--client", "vscode", "--http", "--token-file", str(tmp_path / "t"))
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["mcpServers"]["loci"]
    assert entry["args"][entry["args"].index("serve") :][:3] == ["serve", "--db", str(tmp_path / "m.db")]
    assert str(root) in entry["args"] and Path(entry["command"]).exists()
    assert vscode.returncode == 2 and "token file" in vscode.stderr


def test_print_config_for_http_never_prints_the_token(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret-token\n", encoding="utf-8")
    done = loci("serve", "--print-config", "--client", "vscode", "--http", "--port", "9999", "--token-file", str(token))
    entry = json.loads(done.stdout)["servers"]["loci"]
    assert entry == {
        "type": "http",
        "url": "http://127.0.0.1:9999/mcp",
        "headers": {"Authorization": "Bearer ${env:LOCI_TOKEN}"},
    }
    assert "s3cret-token" not in done.stdout


def test_print_config_over_postgresql_gives_the_connection_string_and_hides_its_password_in_the_note() -> None:
    url = "postgresql://loci:pw-4471@db.invalid/loci"
    done = loci("serve", "memory", "--print-config", "--db", url)
    entry = json.loads(done.stdout)["mcpServers"]["loci"]
    assert done.returncode == 0, done.stderr
    assert entry["args"][entry["args"].index("--db") + 1] == url  # the server it launches needs the whole string
    assert "db.invalid" in done.stderr and "pw-4471" not in done.stderr
