"""Every stored field has a cap: an episode keeps a bounded task and steps, types and labels are lines."""

from __future__ import annotations

import json

import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError
from loci.memory.evolution.episodes import MAX_STEPS, TASK_CHARS, Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.entities import EntityGraph
from loci.memory.graph.graph import Graph
from loci.memory.graph.records import MAX_LABEL_CHARS
from loci.tools.memory_compat import CompatTools


async def test_an_episode_of_a_huge_task_keeps_a_bounded_meta(store: Store) -> None:
    task = "find the berth " * 400_000  # 6 MB, as a run_task client may send
    steps = [Step("context_list", {}, ok=True) for _ in range(MAX_STEPS + 30)]
    evolution = Evolution(Graph(store))
    node_id = await evolution.episodes.write(Episode(task, steps, run_id=7))
    meta = (await Graph(store).get(node_id)).meta
    assert len(meta["task"]) == TASK_CHARS and len(meta["steps"]) == MAX_STEPS
    assert meta["cut"] == {"task_chars": len(task), "steps": MAX_STEPS + 30}
    assert len(json.dumps(meta)) < 2 * TASK_CHARS + 200 * MAX_STEPS


async def test_a_compat_entity_type_over_the_cap_is_refused_and_nothing_is_stored(store: Store) -> None:
    tools = CompatTools(EntityGraph(store))
    with pytest.raises(UsageError, match=f"entity type has 5,000,000 characters, over the limit of {MAX_LABEL_CHARS}"):
        await tools.create_entities([{"name": "Ada", "entityType": "x" * 5_000_000, "observations": []}])
    assert (await tools.read_graph())["entities"] == []


async def test_a_relation_type_over_the_cap_is_refused(store: Store) -> None:
    tools = CompatTools(EntityGraph(store))
    people = [{"name": n, "entityType": "person", "observations": []} for n in ("Ada", "Bob")]
    await tools.create_entities(people)
    with pytest.raises(UsageError, match="edge label has 300 characters"):
        await tools.create_relations([{"from": "Ada", "to": "Bob", "relationType": "k" * 300}])


async def test_a_feedback_note_over_the_cap_is_refused(store: Store) -> None:
    evolution = Evolution(Graph(store))
    await evolution.episodes.write(Episode("a task", run_id=3))
    with pytest.raises(UsageError, match="the note has 20,000 characters"):
        await evolution.episodes.feedback(3, "good", "n" * 20_000)
