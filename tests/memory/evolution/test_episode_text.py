"""An episode's text is its task and a mark: recall does not match it by the words of a label."""

from __future__ import annotations

from memory.engines.base import Engine
from memory.evolution.episodes import Episode, Step
from memory.evolution.evolution import Evolution
from memory.graph.graph import Graph
from memory.graph.recall import Recall


async def test_episodes_are_found_by_their_task_not_by_episode_or_run(engine_store: Engine) -> None:
    graph = Graph(engine_store)
    episodes = Evolution(graph).episodes
    step = Step("context_search", {"query": "bzip2"})
    await episodes.write(Episode("Who holds the copyright of bzip2?", [step], run_id=14))
    await episodes.write(Episode("Who holds the copyright of bzip2?", [step], run_id=16))  # the mark tells them apart
    await episodes.write(Episode("tidy the notes", [step]))
    recall = Recall(graph)
    assert await recall.recall("which run was the episode", k=5, record=False) == []
    found = await recall.recall("bzip2 copyright", k=5, record=False)
    texts = sorted(r.node.text for r in found)
    assert texts == ["Who holds the copyright of bzip2? [r14]", "Who holds the copyright of bzip2? [r16]"]
