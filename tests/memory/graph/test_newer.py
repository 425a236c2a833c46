"""Newer before older: a later restatement with a new value ranks first, and the older stays as history."""

from __future__ import annotations

from datetime import date

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.conversation import Turn, remember_conversation
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.graph.recall import Recall


async def test_a_later_value_ranks_before_the_earlier_one_which_stays_findable(store: Store) -> None:
    graph = Graph(store)
    turns = [
        Turn("user", "The dashboard API answers in about 400ms on average.", "1", "1", date(2024, 3, 15)),
        Turn("assistant", "That is a reasonable start for a dashboard API; caching could help.", "2", "1"),
        Turn("user", "I also moved the budget tracker to Flask 2.3 this week.", "3", "1", date(2024, 3, 15)),
        Turn("user", "The dashboard API now answers in about 250ms on average.", "4", "2", date(2024, 4, 5)),
    ]
    older, _, _, newer = await remember_conversation(graph, turns)
    found = await Recall(graph).recall("How fast does the dashboard API answer on average?", k=3, kinds=["semantic"])
    assert [r.node.id for r in found[:2]] == [newer, older]
    assert found[0].parts["newer"] > 0 and "newer" not in found[1].parts


async def test_a_later_turn_without_a_new_value_does_not_jump_ahead(store: Store) -> None:
    graph = Graph(store)
    turns = [
        Turn("user", "The dashboard API answers in 400ms on average, measured twice.", "1", "1", date(2024, 3, 15)),
        Turn("user", "The dashboard API answers on average fast enough.", "2", "2", date(2024, 4, 5)),
    ]
    first, _ = await remember_conversation(graph, turns)
    found = await Recall(graph).recall("dashboard API answers 400ms on average", k=2, kinds=["semantic"])
    assert found[0].node.id == first and "newer" not in found[0].parts


async def test_an_update_said_in_new_words_still_ranks_before_the_earlier_value(store: Store) -> None:
    graph = Graph(store)
    turns = [
        Turn(
            "user",
            "The dashboard API response time was initially 800ms; I'm trying to bring it down.",
            "1",
            "1",
            date(2024, 4, 5),
        ),
        Turn("user", "Can you suggest colours for the charts on my budget page?", "2", "1", date(2024, 4, 5)),
        Turn(
            "user",
            "Good news: after caching the heavy analytics queries in Redis and trimming the payload, the dashboard"
            " API response time has recently improved to 250ms for most requests coming from the browser.",
            "3",
            "2",
            date(2024, 4, 25),
        ),
    ]
    older, _, newer = await remember_conversation(graph, turns)
    found = await Recall(graph).recall("What is the response time of the dashboard API?", k=3, kinds=["semantic"])
    assert [r.node.id for r in found[:2]] == [newer, older]
    assert found[0].parts["newer"] > 0


async def test_a_later_value_that_lacks_a_term_the_earlier_holds_stays_below(store: Store) -> None:
    graph = Graph(store)
    turns = [
        Turn("user", "The dashboard API response time on staging is 800ms a request.", "1", "1", date(2024, 4, 5)),
        Turn("user", "The dashboard API response time is 250ms a request now.", "2", "2", date(2024, 4, 25)),
    ]
    older, _ = await remember_conversation(graph, turns)
    found = await Recall(graph).recall("dashboard API response time on staging", k=2, kinds=["semantic"])
    assert found[0].node.id == older and "newer" not in found[0].parts


async def test_a_reply_by_someone_else_does_not_restate_the_speakers_value(store: Store) -> None:
    graph = Graph(store)
    turns = [
        Turn("Caroline", "Last weekend I went biking with friends, 30 miles!", "1", "1", date(2023, 9, 13)),
        Turn(
            "Melanie",
            "Biking with friends sounds so fun, Caroline! We did 12 miles of camping trails with the kids.",
            "2",
            "1",
            date(2023, 9, 13),
        ),
    ]
    said, _ = await remember_conversation(graph, turns)
    found = await Recall(graph).recall("When did Caroline go biking with friends?", k=2, kinds=["semantic"])
    assert found[0].node.id == said and "newer" not in found[1].parts


async def test_context_that_lifts_the_older_statement_does_not_hide_the_newer(store: Store) -> None:
    graph = Graph(store)
    added = [
        NewNode(
            "On average the dashboard response time is 800ms for me today.",
            meta={"speaker": "user", "date": "2024-04-05"},
        ),
        NewNode(
            "The dashboard response time is now 250ms on average after caching the queries.",
            meta={"speaker": "user", "date": "2024-04-25"},
        ),
        NewNode("dashboard response time average", kind="episodic"),
    ]
    older, newer, episode = [node_id for node_id, _ in await graph.add_many(added)]
    await graph.link(episode, older, "ground", 1.0)
    found = await Recall(graph).recall("What is the dashboard response time on average?", k=2, kinds=["semantic"])
    assert [r.node.id for r in found] == [newer, older]
    assert found[1].parts["graph"] > 0 and found[0].parts["graph"] == 0
