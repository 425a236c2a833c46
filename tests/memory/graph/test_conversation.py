"""A conversation remembered with its structure: turn text, neighbours, entities, and recall through them."""

from __future__ import annotations

from datetime import date

import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.conversation import (
    NEXT_WEIGHT,
    REPLY_WEIGHT,
    Turn,
    entities_of,
    remember_conversation,
    turn_text,
)
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall

SAID = date(2023, 5, 8)


@pytest.fixture
def graph(store: Store) -> Graph:
    return Graph(store)


def test_a_turn_is_remembered_with_its_image_and_resolved_dates() -> None:
    turn = Turn("Caroline", "I went to a support group yesterday.", "D1:3", "1", SAID, "a photo of a rainbow flag")
    assert turn_text(turn) == (
        "[8 May 2023] Caroline: I went to a support group yesterday. [shares an image: a photo of a rainbow flag]"
        " (yesterday = 7 May 2023)"
    )
    assert turn_text(Turn("", "no speaker, no date")) == "no speaker, no date"


def test_entities_are_names_that_do_not_start_a_sentence() -> None:
    assert entities_of("We drove to Lake Tahoe with Oscar. Then we ate.") == {"lake tahoe", "oscar"}
    assert entities_of("Then nothing here.") == set()


async def test_turns_are_linked_to_the_next_turn_and_by_shared_entities(graph: Graph) -> None:
    turns = [
        Turn("Ann", "I adopted a dog named Biscuit", "D1:1", "1", SAID),
        Turn("Bob", "Cute! What breed?", "D1:2", "1", SAID),
        Turn("Ann", "   ", "D1:3", "1", SAID),
        Turn("Ann", "A beagle.", "D1:4", "1", SAID),
        Turn("Bob", "How is Biscuit doing?", "D2:1", "2", date(2023, 6, 1)),
    ]
    ids = await remember_conversation(graph, turns, cause="test")
    assert ids[2] is None and all(i is not None for i in ids[:2] + ids[3:])
    edges = {(e.src, e.dst): e.weight for i in ids if i is not None for e in await graph.edges(i)}
    assert edges[(ids[0], ids[1])] == NEXT_WEIGHT and edges[(ids[1], ids[3])] == REPLY_WEIGHT  # "What breed?"
    assert (ids[3], ids[4]) not in edges  # another session
    assert (ids[0], ids[4]) in edges  # both name Biscuit
    node = await graph.get(ids[4])
    assert node.meta == {
        "ref": "D2:1",
        "speaker": "Bob",
        "session": "2",
        "date": "2023-06-01",
        "spoken_date": "1 June 2023",
    }


async def test_the_answer_to_a_matched_question_is_recalled_through_its_neighbour(graph: Graph) -> None:
    turns = [Turn("Ann", f"filler talk number {i} about weather", f"D1:{i}", "1", SAID) for i in range(10)]
    turns += [Turn("Bob", "Which breed is your dog?", "D2:1", "2", SAID), Turn("Ann", "A beagle.", "D2:2", "2", SAID)]
    ids = await remember_conversation(graph, turns)
    found = await Recall(graph).recall("What breed is Ann's dog?", k=3, record=False)
    assert [r.node.id for r in found[:2]] == [ids[10], ids[11]]
    assert found[1].parts["lexical"] == 0 and found[1].parts["graph"] > 0
    no_graph = await Recall(graph).recall("What breed is Ann's dog?", k=3, record=False, hops=0)
    assert ids[11] not in {r.node.id for r in no_graph}


async def test_each_session_is_an_episode_that_leads_to_its_turns(graph: Graph) -> None:
    turns = [Turn("Ann", "We talked about gardens", "D1:1", "1", SAID), Turn("Bob", "and roses", "D1:2", "1", SAID)]
    turns += [Turn("Ann", f"unrelated chat {i}", f"D2:{i}", "2", SAID) for i in range(6)]
    ids = await remember_conversation(graph, turns)
    stats = await graph.stats()
    assert stats["nodes_by_kind"]["episodic"] == 2 and stats["edges_by_kind"]["ground"] == len(turns)
    found = await Recall(graph).recall("gardens roses", k=3, kinds=["semantic"], record=False)
    assert {r.node.kind for r in found} == {"semantic"}
    assert {r.node.id for r in found[:2]} == {ids[0], ids[1]}


async def test_a_standing_instruction_is_recalled_with_the_turns_on_its_topic(graph: Graph) -> None:
    rule = Turn("user", "Always include version numbers when I ask about weather client dependencies.", "r", "1")
    chat = [Turn("user", f"I cooked pasta number {n} tonight.", f"p{n}", "1") for n in range(12)]
    topic = [
        Turn("user", f"My weather client fetches the forecast with retries for city {n}.", f"s{n}", "2")
        for n in range(2)
    ]
    near = [Turn("user", f"I fetch the forecast on my phone each morning, day {n}.", f"f{n}", "3") for n in range(3)]
    ids = await remember_conversation(graph, [rule, *chat, *topic, *near])
    linked = {e.dst for e in await graph.edges(ids[0]) if e.src == ids[0] and e.kind == "related"}
    assert set(ids[13:15]) <= linked and linked.isdisjoint(ids[15:])
    question = "How does my weather client fetch the forecast with retries?"
    found = {r.node.id: r for r in await Recall(graph).recall(question, k=3, kinds=["semantic"])}
    assert set(found) == {ids[0], *ids[13:15]} and found[ids[0]].parts["graph"] > 0
