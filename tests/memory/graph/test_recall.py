"""Recall: BM25 candidates, spreading activation, recency and frequency, explained and recorded."""

from __future__ import annotations

from typing import Any

import pytest

from loci.memory.context.fulltext import fts_literal
from loci.memory.engines.base import Engine
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError
from loci.memory.graph.conversation import Turn, remember_conversation
from loci.memory.graph.fts.index import text_index
from loci.memory.graph.fts.sqlite import stems as term_stems
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.graph.ranking import Weights
from loci.memory.graph.recall import Recall
from loci.memory.graph.terms import asks_for_replies, query_terms, selective_terms


@pytest.fixture
def graph(engine_store: Engine) -> Graph:
    return Graph(engine_store)


@pytest.fixture
def recall(graph: Graph) -> Recall:
    return Recall(graph)


async def test_recall_ranks_the_best_lexical_match_first_and_explains_it(graph: Graph, recall: Recall) -> None:
    await graph.add_many(
        [NewNode("the cat sat on the mat"), NewNode("Alice keeps a cat named Tom"), NewNode("dogs bark")]
    )
    [best, *rest] = await recall.recall("what is the name of Alice's cat?", k=3)
    assert best.node.text == "Alice keeps a cat named Tom"
    assert set(best.parts) == {"lexical", "vector", "graph", "recency", "frequency"}
    assert best.parts["lexical"] == 1.0
    assert best.score == pytest.approx(sum(best.parts.values()), abs=1e-3)
    assert all(r.node.text != "dogs bark" for r in rest)


async def test_spreading_activation_finds_a_linked_fact_with_no_matching_word(graph: Graph, recall: Recall) -> None:
    berlin, _ = await graph.remember("Bob moved to Berlin in 2021")
    job, _ = await graph.remember("He works as a nurse at Charité", links=[berlin.id])
    await graph.remember("Totally unrelated sentence about gardening")
    found = await recall.recall("where did Bob move", k=3)
    assert [r.node.id for r in found[:2]] == [berlin.id, job.id]
    assert found[1].parts["lexical"] == 0 and found[1].parts["graph"] > 0
    assert found[1].via is not None


async def test_the_best_direct_match_stays_first_when_the_graph_lifts_a_near_tie(graph: Graph, recall: Recall) -> None:
    added = [
        NewNode("The staging server port is 7070."),
        NewNode("The staging server port came up in the review."),
        NewNode("Session: the staging server port, the staging server, its port.", kind="episodic"),
    ]
    best, tied, session = [node_id for node_id, _ in await graph.add_many(added)]
    await graph.link(tied, session, "related", 1.0)
    found = await recall.recall("staging server port", k=2, kinds=["semantic"])
    assert [r.node.id for r in found] == [best, tied]
    assert found[1].parts["graph"] > 0 and found[0].parts["lead"] > 0
    assert found[0].score > found[1].score and found[0].score == round(sum(found[0].parts.values()), 4)


async def test_a_link_between_two_matches_counts_once_times_its_corroboration(graph: Graph) -> None:
    added = [
        NewNode("The harbour lighthouse keeper logs the tide."),
        NewNode("A lighthouse stands on the cape."),
        NewNode("Gulls circle over fishing boats."),
    ]
    keeper, cape, gulls = [node_id for node_id, _ in await graph.add_many(added)]
    await graph.link_many([(keeper, cape, "related", 0.1), (keeper, gulls, "related", 0.1)])
    query = "harbour lighthouse keeper tide"

    async def parts(corroboration: float) -> dict[int, dict[str, float]]:
        found = await Recall(graph, Weights(corroboration=corroboration)).recall(query, k=3, record=False, hops=1)
        return {r.node.id: r.parts for r in found}

    once, twice = await parts(1.0), await parts(2.0)
    # Read once from each end, the link between the two matches counts once: as much as the same link
    # to a turn that matches nothing, where the match leaves room for it.
    assert once[cape]["graph"] / (1 - once[cape]["lexical"]) == pytest.approx(once[gulls]["graph"], abs=2e-3)
    assert twice[cape]["graph"] == pytest.approx(2 * once[cape]["graph"], abs=2e-3)
    assert twice[gulls]["graph"] == once[gulls]["graph"] > 0


async def test_two_hops_reach_further_with_decay(graph: Graph, recall: Recall) -> None:
    ids = [n for n, _ in await graph.add_many([NewNode("zebra stripes"), NewNode("middle node"), NewNode("far node")])]
    await graph.link_many([(ids[0], ids[1], "related", 1.0), (ids[1], ids[2], "related", 1.0)])
    found = {r.node.id: r for r in await recall.recall("zebra", k=5)}
    assert found[ids[1]].parts["graph"] > found[ids[2]].parts["graph"] > 0
    one_hop = {r.node.id for r in await recall.recall("zebra", k=5, hops=1)}
    assert ids[2] not in one_hop


async def test_recall_records_activation_of_what_it_returned(graph: Graph, recall: Recall) -> None:
    a, _ = await graph.remember("Mount Everest is 8849 metres high")
    b, _ = await graph.remember("K2 is the second highest mountain", links=[a.id])
    await recall.recall("Everest", k=2)
    assert (await graph.get(a.id)).uses == 1
    assert (await graph.get(b.id)).uses == 1
    [edge] = await graph.edges(a.id)
    assert edge.uses == 1 and edge.last_used is not None
    await recall.recall("Everest", k=2, record=False)
    assert (await graph.get(a.id)).uses == 1


async def test_frequency_of_use_breaks_a_lexical_tie(graph: Graph) -> None:
    recall = Recall(graph, Weights(recency=0.0, frequency=0.5))
    first, _ = await graph.remember("deploy notes: version one")
    second, _ = await graph.remember("deploy notes: version two")
    for _ in range(3):
        await graph.remember("deploy notes: version two")
    found = await recall.recall("deploy notes", k=2, record=False)
    assert [r.node.id for r in found] == [second.id, first.id]
    assert found[0].parts["frequency"] > found[1].parts["frequency"] == 0


async def test_kinds_filter_and_forgotten_nodes_are_excluded(graph: Graph, recall: Recall) -> None:
    fact, _ = await graph.remember("release checklist fact")
    recipe, _ = await graph.remember("release checklist recipe", kind="procedural")
    gone, _ = await graph.remember("release checklist old")
    await graph.forget(gone.id)
    assert [r.node.id for r in await recall.recall("release checklist", kinds=["procedural"])] == [recipe.id]
    assert {r.node.id for r in await recall.recall("release checklist")} == {fact.id, recipe.id}


SYNTAX = "NEAR the unbalanced col thing start xylophone"
PLAIN = "x marks the spot, and b follows a"


@pytest.mark.parametrize(
    ("query", "hit"),
    [
        ('"unbalanced', SYNTAX),
        ("NEAR(", SYNTAX),
        ("x*", PLAIN),
        ("a AND OR NOT b", PLAIN),
        ("col:thing", SYNTAX),
        ("^start", SYNTAX),
        ("(x", PLAIN),
    ],
)
async def test_fts_syntax_in_a_query_is_searched_literally(graph: Graph, recall: Recall, query: str, hit: str) -> None:
    await graph.add_many([NewNode(SYNTAX), NewNode(PLAIN)])
    # `x*` as FTS syntax would be a prefix and find "xylophone"; read literally it is the word "x".
    assert [r.node.text for r in await recall.recall(query, record=False)] == [hit]


async def test_a_query_without_words_is_a_clear_error(recall: Recall) -> None:
    with pytest.raises(UsageError, match="empty"):
        await recall.recall("   ")
    with pytest.raises(UsageError, match="no words"):
        await recall.recall("*** ??? !!!")
    with pytest.raises(UsageError, match="no words"):
        await recall.recall("*")


def test_query_terms_are_quoted_words_without_stop_words() -> None:
    assert fts_literal(query_terms('What did "Alice" say about NEAR(x*')) == '"alice" OR "say" OR "near" OR "x"'
    assert query_terms("the of and") == ["the", "of", "and"]
    assert fts_literal(query_terms("!!!")) == ""


async def test_terms_are_counted_under_the_index_stems(store: Store) -> None:
    stems = store.read_sync(lambda db: term_stems(db.conn, ["plays", "x-ray", "running"]))
    assert stems == {"plays": ["plai"], "x-ray": ["x", "rai"], "running": ["run"]}


async def test_plain_bm25_baseline_uses_the_same_index(graph: Graph, recall: Recall) -> None:
    a, _ = await graph.remember("kiwi fruit is green")
    await graph.remember("bananas are yellow")
    assert await recall.bm25("green kiwi", k=5) == [a.id]


async def test_rare_terms_lead_and_crowded_terms_fall_back_to_the_newest(graph: Graph, engine_store: Engine) -> None:
    ids = [n for n, _ in await graph.add_many([NewNode(f"common word, item {i}") for i in range(30)])]
    rare, _ = await graph.remember("common word and a zeppelin")
    kept = await engine_store.read(lambda db: selective_terms(db.conn, ["common", "zeppelin"], budget=5))
    assert kept == (["zeppelin"], False)
    assert await engine_store.read(lambda db: selective_terms(db.conn, ["common"], budget=5)) == (["common"], True)
    crowded = Recall(graph, budget=5, candidates=8)
    found = await crowded.recall("common word", k=8, record=False, hops=0)
    assert len(found) == 8 and {r.node.id for r in found} <= {rare.id, *ids[-16:]}
    assert (await crowded.recall("zeppelin common", k=1, record=False))[0].node.id == rare.id


@pytest.mark.parametrize(
    ("question", "replies"),
    [
        ("How did you recommend handling the rate limit?", True),
        ("Summarise what we've discussed about the schema.", True),
        ("What did I mention about the rate limit?", False),
        ("Can you list the order in which I brought up the features?", False),
        ("What steps would you suggest I take?", False),
    ],
)
def test_a_question_says_whether_it_asks_for_the_assistants_words(question: str, replies: bool) -> None:
    assert asks_for_replies(question) is replies


async def test_a_question_about_the_assistants_advice_finds_its_turn_before_the_persons(graph: Graph) -> None:
    turns = [
        Turn("user", "My retries keep hitting the rate limit of the weather service.", "1", "1"),
        Turn("assistant", "For handling the rate limit of the weather service, back off between retries.", "2", "1"),
    ]
    asked, advised = await remember_conversation(graph, turns)
    recall = Recall(graph)
    mine = await recall.recall("What did I say about the rate limit retries?", k=2, kinds=["semantic"])
    assert mine[0].node.id == asked
    yours = await recall.recall("How did you recommend handling the rate limit retries?", k=2, kinds=["semantic"])
    assert yours[0].node.id == advised


async def test_the_frame_of_a_question_about_the_conversation_is_not_searched(graph: Graph, recall: Recall) -> None:
    fact, _ = await graph.remember("user: My budget tracker stores every expense in SQLite.")
    await graph.remember(
        "assistant: Across our sessions we had different discussions; here is a comprehensive summary of this"
        " conversation, listed in order."
    )
    found = await recall.recall("Can you give a comprehensive summary of my budget tracker across our conversations?")
    assert found[0].node.id == fact.id
    # Plain BM25, the baseline, searches every word and puts the reply about the conversation first.
    assert await recall.bm25(
        "Can you give a comprehensive summary of my budget tracker across our conversations?", k=1
    ) != [fact.id]


async def test_a_words_document_count_follows_remembering_and_forgetting(graph: Graph) -> None:
    first, _ = await graph.remember("the zeppelin landed at noon")
    await graph.remember("a zeppelin crossed the bay")

    def zeppelins(conn: Any) -> int:
        index = text_index(conn)
        [token] = index.stems(conn, ["zeppelin"])["zeppelin"]
        return index.documents(conn, [token], 100)[token]

    assert await graph.store.read(lambda db: zeppelins(db.conn)) == 2
    await graph.forget(first.id)
    assert await graph.store.read(lambda db: zeppelins(db.conn)) == 1
