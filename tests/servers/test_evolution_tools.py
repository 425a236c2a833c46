"""`memory_procedures` and `memory_feedback` over MCP, in-process: results and readable errors."""

from __future__ import annotations

from mcp import Client

from loci.memory.engines.sqlite.store import Store
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.evolution.params import EvolutionParams
from loci.memory.graph.graph import Graph
from loci.memory.jobs.worker import Worker
from loci.servers.memory import memory_server_for


async def test_feedback_over_mcp_counts_once_and_refuses_bad_input(store: Store) -> None:
    evolution = Evolution(Graph(store))
    episode = await evolution.episodes.write(Episode("tidy the notes", [Step("memory_recall", {"query": "x"})]))
    async with Client(memory_server_for(store)) as client:
        first = await client.call_tool("memory_feedback", {"target": f"mem:{episode}", "outcome": "good"})
        again = await client.call_tool("memory_feedback", {"target": f"mem:{episode}", "outcome": "good"})
        wrong = await client.call_tool("memory_feedback", {"target": f"mem:{episode}", "outcome": "bad"})
        outside = await client.call_tool("memory_feedback", {"target": f"mem:{episode}", "outcome": "2"})
        unknown = await client.call_tool("memory_feedback", {"target": "run:41", "outcome": "good"})
    assert first.structured_content["counted"] is True
    assert again.structured_content["counted"] is False
    assert not wrong.is_error and wrong.structured_content["replaced"] == 1.0  # a later verdict replaces it
    assert outside.is_error and "outside [0, 1]" in outside.content[0].text
    assert unknown.is_error and "run 41" in unknown.content[0].text


async def test_procedures_over_mcp_lists_a_distilled_recipe(store: Store) -> None:
    evolution = Evolution(Graph(store), EvolutionParams(distill_n=2))
    for task in ("archive the march invoices", "archive the april invoices"):
        steps = [Step("context_search", {"query": "invoices"}), Step("context_read", {"id": "doc:1", "start": 1})]
        await evolution.episodes.write(Episode(task, steps, outcome=1.0))
    await Worker(evolution.jobs, evolution.handlers()).drain()
    async with Client(memory_server_for(store)) as client:
        found = await client.call_tool("memory_procedures", {"task": "archive the may invoices", "k": 3})
        nothing = await client.call_tool("memory_procedures", {"task": "water the plants"})
    [procedure] = found.structured_content["result"]
    assert procedure["status"] == "probationary"
    assert procedure["steps"] == ["context_search(query:str)", "context_read(id:str,start:int)"]
    assert nothing.structured_content["result"] == []
