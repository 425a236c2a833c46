"""The agent with a hosted server: it calls the server's tool by its namespaced name, and lives through a crash."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio

from loci.runtime.loop.records import RunConfig
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.session.session import open_session

TOY = Path(__file__).with_name("toy_server.py")


def config(tmp_path: Path, **extra: object) -> Path:
    entry = {"command": sys.executable, "args": [str(TOY), str(tmp_path / "starts.txt")], **extra}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"toy": entry}}), encoding="utf-8")
    return path


async def test_a_crash_mid_run_is_an_error_observation_and_the_server_comes_back(tmp_path: Path) -> None:
    seen: list[str] = []

    def after(step: dict) -> object:
        def reply(request: Request) -> dict:
            seen.append(request.messages[-1]["content"])
            return step

        return reply

    model = ScriptedModel(
        [
            {"state": "", "tool": "toy__echo", "arguments": {"text": "hello"}},
            after({"state": "echoed", "tool": "toy__crash", "arguments": {}}),
            after({"state": "crashed", "tool": "toy__echo", "arguments": {"text": "again"}}),
            after({"state": "back", "answer": "the toy server came back", "evidence": []}),
        ]
    )
    with anyio.fail_after(120):
        async with open_session(model, tmp_path / "loci.db", RunConfig(mcp_config=config(tmp_path))) as session:
            run_id, result = await session.run("use the toy server")
            restarts = session.host.hosted["toy"].restarts
    assert result.status == "done" and [t.action.tool for t in result.turns[:3]] == [
        "toy__echo",
        "toy__crash",
        "toy__echo",
    ]
    assert "echo: hello" in seen[0]
    assert "stopped; restarting it" in seen[1]
    assert "echo: again" in seen[2]
    assert restarts == 1 and len((tmp_path / "starts.txt").read_text().splitlines()) == 2
    assert run_id == 1


def test_mcp_list_shows_each_server_its_status_and_tools(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    toy = {"command": sys.executable, "args": [str(TOY)], "deny": ["crash"]}
    path.write_text(json.dumps({"mcpServers": {"toy": toy, "gone": {"command": sys.executable, "args": ["-c", ""]}}}))
    command = [sys.executable, "-m", "loci.runtime.cli.main", "mcp", "list", "--mcp-config", str(path), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    servers = {s["name"]: s for s in json.loads(done.stdout)["servers"]}
    assert done.returncode == 1  # one server is down
    assert servers["toy"]["status"] == "running" and servers["gone"]["status"] == "failed"
    names = {tool["name"] for tool in servers["toy"]["tools"]}
    assert "toy__echo" in names and "toy__crash" not in names
    assert servers["gone"]["error"]
