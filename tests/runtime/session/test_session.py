"""The session's record of a run: a run that does not finish keeps the turns it made."""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer

from loci.memory.records.runs import Runs
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.session.session import open_session


def tool(name: str, **arguments: object) -> dict[str, object]:
    return {"state": f"calling {name}", "tool": name, "arguments": arguments}


async def test_a_cancelled_run_is_recorded_with_the_turns_progress_reported(tmp_path: Path) -> None:
    first = [tool("context_list"), {"state": "done", "answer": "nothing loaded", "evidence": []}]
    model = ScriptedModel(
        [*first, tool("context_search", query="fee"), tool("context_search", query="plot"), tool("hang")]
    )
    reported: list[int] = []
    hanging = anyio.Event()
    server = MCPServer(name="slow")

    @server.tool(name="hang")
    async def hang() -> str:
        """Never answers."""
        hanging.set()
        await anyio.sleep_forever()
        return ""

    async with open_session(model, tmp_path / "loci.db", on_turn=lambda trace: reported.append(trace.turn)) as session:
        await session.host.add("slow", server)
        await session.run("list what is loaded")
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(session.run, "look, then wait")
                await hanging.wait()
                group.cancel_scope.cancel()
        record, earlier = await Runs(session.store).list()
    model.check_used()
    assert reported == [1, 2, 1, 2]  # the caller's on_turn still hears every turn
    assert (earlier.status, len(earlier.turns)) == ("done", 2)
    assert record.status == "cancelled"
    assert [(t["turn"], t["arguments"]) for t in record.turns] == [(1, {"query": "fee"}), (2, {"query": "plot"})]
    assert record.tokens > 0
