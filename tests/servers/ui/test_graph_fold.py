"""The page's overview draws the memory and folds a run's records, saying how many."""

from __future__ import annotations

from loci.memory.engines.sqlite.store import Store
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph, NewNode
from loci.servers.ui.graph_view import GraphView


async def test_the_overview_folds_run_episodes_and_counts_them(store: Store) -> None:
    graph = Graph(store)
    turns = [node_id for node_id, _ in await graph.add_many([NewNode(f"Maria said thing {n}.") for n in range(5)])]
    episodes = Evolution(graph).episodes
    for run in range(12):
        step = Step("memory_recall", {"query": "thing"}, recalled=(turns[0],), used=(turns[0],))
        await episodes.write(Episode("What did Maria say?", [step], outcome=1.0, run_id=run + 1))
    piece = await GraphView(graph).top()
    drawn = {node["id"] for node in piece["nodes"]}
    assert drawn == {f"mem:{i}" for i in turns}  # the runs' episodes, used most, are not what is drawn
    assert piece["folded_runs"] == 12
