"""The MCP host: external servers from an mcpServers file, filters, restarts, tool changes and clean errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import BackendError, ModelBehaviorError, UsageError
from loci.runtime.host.host import McpHost, load_server_config
from loci.runtime.host.hosted import MAX_RESTARTS
from loci.servers.app import build_app

TOY = Path(__file__).with_name("toy_server.py")


def toy_config(tmp_path: Path, **extra: object) -> Path:
    marker = tmp_path / "starts.txt"
    entry = {"command": sys.executable, "args": [str(TOY), str(marker)], **extra}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"toy": entry}}), encoding="utf-8")
    return path


def starts(tmp_path: Path) -> int:
    return len((tmp_path / "starts.txt").read_text().splitlines())


async def test_an_external_stdio_server_is_namespaced_and_callable(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with McpHost() as host:
            await host.add_config(toy_config(tmp_path))
            names = {tool.name for tool in host.tools}
            echoed = await host.call("toy__echo", {"text": "hi"})
            unknown = await host.call("echo", {})
    assert {"toy__echo", "toy__hang", "toy__crash"} <= names and "echo" not in names
    assert not echoed.is_error and echoed.text == "echo: hi"
    assert unknown.is_error and "unknown tool" in unknown.text


async def test_allow_and_deny_filter_a_servers_tools(tmp_path: Path) -> None:
    config = toy_config(tmp_path, allow=["echo", "crash", "where"], deny=["crash"])
    with anyio.fail_after(60):
        async with McpHost() as host:
            await host.add_config(config)
            names = {tool.name for tool in host.tools}
            denied = await host.call("toy__crash", {})
    assert names == {"toy__echo", "toy__where"}
    assert denied.is_error and "unknown tool" in denied.text and starts(tmp_path) == 1


async def test_env_and_cwd_reach_a_stdio_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCI_TEST_SECRET", "from-the-environment")
    config = toy_config(tmp_path, env={"TOY_SETTING": "${LOCI_TEST_SECRET}"}, cwd=str(tmp_path))
    with anyio.fail_after(60):
        async with McpHost() as host:
            await host.add_config(config)
            where = await host.call("toy__where", {})
    assert where.text == f"{tmp_path} from-the-environment"


async def test_a_crashed_server_gives_an_error_result_then_is_restarted(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with McpHost() as host:
            await host.add_config(toy_config(tmp_path))
            crashed = await host.call("toy__crash", {})
            after = await host.call("toy__echo", {"text": "back"})
            restarts = host.hosted["toy"].restarts
    assert crashed.is_error and "stopped; restarting it" in crashed.text
    assert not after.is_error and after.text == "echo: back"
    assert restarts == 1 and starts(tmp_path) == 2


async def test_a_server_that_keeps_crashing_is_given_up_after_the_limit(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with McpHost() as host:
            await host.add_config(toy_config(tmp_path))
            results = [await host.call("toy__crash", {}) for _ in range(MAX_RESTARTS + 1)]
            down = await host.call("toy__echo", {"text": "anyone?"})
            status = host.hosted["toy"].status
    assert all(r.is_error for r in results)
    assert status == "failed" and down.is_error and "is down" in down.text
    assert starts(tmp_path) == MAX_RESTARTS + 1


async def test_a_tool_that_hangs_times_out_and_the_live_server_is_kept(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with McpHost(call_timeout=0.5) as host:
            await host.add_config(toy_config(tmp_path))
            hung = await host.call("toy__hang", {})
            after = await host.call("toy__echo", {"text": "still here"})
    assert hung.is_error and "toy__hang failed" in hung.text
    assert after.text == "echo: still here" and starts(tmp_path) == 1


async def test_tools_a_server_adds_are_picked_up(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with McpHost() as host:
            await host.add_config(toy_config(tmp_path))
            before = {tool.name for tool in host.tools}
            await host.call("toy__grow", {})
            while "toy__extra" not in {tool.name for tool in host.tools}:
                await anyio.sleep(0.01)
            extra = await host.call("toy__extra", {})
    assert "toy__extra" not in before
    assert extra.text == "extra here"


async def test_a_server_that_will_not_start_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"gone": {"command": sys.executable, "args": ["-c", "pass"]}}}))
    with anyio.fail_after(60):
        async with McpHost() as host:
            with pytest.raises(BackendError, match="cannot connect to the MCP server 'gone'"):
                await host.add_config(path)


async def test_an_http_server_gets_its_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.runtime.cli.test_serve_http import start, stop

    token = tmp_path / "token"
    token.write_text("hosted-secret\n", encoding="utf-8")
    served = start(tmp_path, "--token-file", str(token), "--tools", "memory")
    monkeypatch.setenv("LOCI_TEST_KEY", "hosted-secret")
    good = {"url": served.url, "headers": {"Authorization": "Bearer ${LOCI_TEST_KEY}"}, "allow": ["memory_stats"]}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"mem": good, "nokey": {"url": served.url}}}))
    try:
        with anyio.fail_after(60):
            async with McpHost() as host:
                await host.add_config(path, strict=False)
                stats = await host.call("mem__memory_stats", {})
                statuses = {name: hosted.status for name, hosted in host.hosted.items()}
    finally:
        stop(served.process)
        served.process.stderr.close()
    assert not stats.is_error and "nodes" in stats.text
    assert statuses == {"mem": "running", "nokey": "failed"}


async def test_two_servers_with_the_same_tool_are_refused(store: Store) -> None:
    async with McpHost() as host:
        await host.add("one", build_app(store, ("context",)))
        with pytest.raises(UsageError, match="two MCP servers offer a tool named 'context_list'"):
            await host.add("two", build_app(store, ("context",)))
        assert len(host.tools) == len({tool.name for tool in host.tools})


async def test_an_error_inside_the_host_comes_out_whole(store: Store) -> None:
    with pytest.raises(ModelBehaviorError, match="the model misbehaved"):
        async with McpHost() as host:
            await host.add("context", build_app(store, ("context",)))
            raise ModelBehaviorError("the model misbehaved")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ('{"servers": {}}', "must hold an object with an `mcpServers` object"),
        ('{"mcpServers": {"x": {"args": []}}}', "needs a `command` or a `url`"),
        ('{"mcpServers": {"x": {"command": "a", "allow": "echo"}}}', "`allow` must be a list of strings"),
        ('{"mcpServers": {"x": {"url": "http://127.0.0.1:1/mcp", "headers": []}}}', "`headers` must be an object"),
        ('{"mcpServers": {"x": {"command": "a", "timeout": -1}}}', "`timeout` is a number of seconds"),
        ('{"mcpServers": {"x": {"command": "a", "cwd": "/no/such/dir"}}}', "is not a directory"),
    ],
)
def test_a_malformed_server_file_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        load_server_config(path)


def test_a_missing_server_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read the MCP server file"):
        load_server_config(tmp_path / "nope.json")


async def test_a_tool_that_does_not_answer_in_time_is_an_error_result(store: Store) -> None:
    from mcp.server.mcpserver import MCPServer

    slow = MCPServer(name="slow")

    @slow.tool()
    async def wait_forever() -> str:
        """Never answers in time."""
        await anyio.sleep(30)
        return "late"

    with anyio.fail_after(20):
        async with McpHost(call_timeout=0.5) as host:
            await host.add("slow", slow)
            result = await host.call("wait_forever", {})
    assert result.is_error and "wait_forever failed: Timed out after 0.5s" in result.text
