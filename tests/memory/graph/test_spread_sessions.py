"""Other sessions at the top: a turn lifted by its session's episode yields to a better match of another session."""

from __future__ import annotations

from datetime import date

from loci.memory.engines.base import Engine
from loci.memory.engines.sqlite.store import Store
from loci.memory.evolution.episodes import Episode, Episodes, Step
from loci.memory.graph.conversation import Turn, remember_conversation
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall
from loci.memory.graph.spread_sessions import fuller_first

QUESTION = "How did I set up nginx, docker, the certificate and the deploy?"
# Session 1 names every term of the question, a turn at a time between small talk; its episode matches the
# question as a whole and lifts each of those turns. Session 2 says one of them, in fewer words.
FIRST = [
    "The nginx proxy and the docker compose file are ready for the deploy.",
    "The docker image builds in two minutes on the old laptop when the cache is warm.",
    "The nginx config has gzip turned on and a long list of headers for the static files.",
    "The certificate renews itself every month through a cron job that runs at night.",
    "The deploy runs from a Makefile with a target for each of the three servers.",
]
SMALL_TALK = [f"Filler line {n} about lunch and the weather." for n in ("one", "two", "three", "four", "five")]
SECOND = ["My cat knocked a plant over this morning.", "I moved the certificate to the new server."] + [
    f"Another note {n} about music and books." for n in ("one", "two", "three", "four", "five", "six")
]


async def _remember(graph: Graph) -> dict[str, int]:
    said = [text for pair in zip(FIRST, SMALL_TALK, strict=True) for text in pair]
    turns = [Turn("user", text, f"a{i}", "1", date(2024, 3, 1)) for i, text in enumerate(said)]
    turns += [Turn("user", text, f"b{i}", "2", date(2024, 4, 1)) for i, text in enumerate(SECOND)]
    ids = await remember_conversation(graph, turns)
    return {turn.ref: node_id for turn, node_id in zip(turns, ids, strict=True)}


async def test_a_turn_its_session_lifted_yields_its_place_to_a_better_match_of_another_session(
    engine_store: Engine,
) -> None:
    graph = Graph(engine_store)
    ref = await _remember(graph)
    found = await Recall(graph).recall(QUESTION, k=10, kinds=["semantic"], record=False)
    order = [r.node.id for r in found]
    moved = found[order.index(ref["b1"])]
    passed = found[order.index(ref["a6"])]  # the certificate's turn of session 1, a weaker match by its words
    assert moved.parts["lexical"] > passed.parts["lexical"] and passed.parts["graph"] > moved.parts["graph"]
    assert order.index(ref["b1"]) < order.index(ref["a6"])
    assert moved.parts["session"] > 0 and "session" not in passed.parts
    assert moved.score == round(sum(moved.parts.values()), 4)


async def test_a_turn_lifted_by_its_neighbour_keeps_its_place(store: Store) -> None:
    graph = Graph(store)
    ref = await _remember(graph)
    found = await Recall(graph).recall(QUESTION, k=10, kinds=["semantic"], record=False)
    order = [r.node.id for r in found]
    # The small talk right after the best match is its context (a `next` link), not its session's: it stays.
    assert order[:2] == [ref["a0"], ref["a1"]]
    assert found[1].parts["lexical"] == 0 and "session" not in found[1].parts


async def test_a_turn_a_runs_episode_lifted_keeps_its_place(store: Store) -> None:
    graph = Graph(store)
    ref = await _remember(graph)
    # A run on the same question used a turn of session 1 that says none of its words: experience, not its
    # session's context, so the sessions' rule leaves it where the lift put it.
    step = Step("memory_recall", {"query": QUESTION}, recalled=(ref["a7"], ref["b1"]), used=(ref["a7"],))
    episode = await Episodes(graph).write(Episode(QUESTION, [step], outcome=1.0))
    found = await Recall(graph).recall(QUESTION, k=10, kinds=["semantic"], record=False)
    order = [r.node.id for r in found]
    lifted = found[order.index(ref["a7"])]
    assert lifted.parts["lexical"] == 0 and lifted.parts["graph"] > 0.4 and "session" not in lifted.parts
    assert order.index(ref["a7"]) < order.index(ref["a6"])
    assert episode not in order


async def test_a_session_of_another_conversation_with_the_same_name_is_another_session(store: Store) -> None:
    graph = Graph(store)
    said = [text for pair in zip(FIRST, SMALL_TALK, strict=True) for text in pair]
    first = [Turn("user", text, f"a{i}", "1", date(2024, 3, 1)) for i, text in enumerate(said)]
    second = [Turn("user", text, f"b{i}", "1", date(2024, 4, 1)) for i, text in enumerate(SECOND)]
    ids = await remember_conversation(graph, first)
    ids += await remember_conversation(graph, second)  # a conversation of its own, whose session is also "1"
    ref = {turn.ref: node_id for turn, node_id in zip(first + second, ids, strict=True)}
    found = await Recall(graph).recall(QUESTION, k=10, kinds=["semantic"], record=False)
    order = [r.node.id for r in found]
    assert order.index(ref["b1"]) < order.index(ref["a6"])
    assert found[order.index(ref["b1"])].parts["session"] > 0


# A long message of the person's, in session 1, that holds four of the question's terms: its link to the session
# is weak (a long message carries its own context), so the session lifts the short turns that each hold one term
# above it.
CHECKLIST = "How I set up the certificate for nginx in docker: " + " ".join(
    f"step {n} of the checklist went by without a warning." for n in range(30)
)


async def _remember_with(graph: Graph, speaker: str) -> dict[str, int]:
    said = [text for pair in zip(FIRST, SMALL_TALK, strict=True) for text in pair]
    turns = [Turn("user", text, f"a{i}", "1", date(2024, 3, 1)) for i, text in enumerate(said)]
    turns.append(Turn(speaker, CHECKLIST, "long", "1", date(2024, 3, 1)))
    ids = await remember_conversation(graph, turns)
    return {turn.ref: node_id for turn, node_id in zip(turns, ids, strict=True)}


async def test_a_turn_its_session_lifted_yields_to_a_match_of_the_persons_that_holds_more_of_the_question(
    store: Store,
) -> None:
    graph = Graph(store)
    ref = await _remember_with(graph, "user")
    found = await Recall(graph).recall(QUESTION, k=10, kinds=["semantic"], record=False)
    order = [r.node.id for r in found]
    fuller = found[order.index(ref["long"])]
    for passed in (found[order.index(ref["a6"])], found[order.index(ref["a8"])]):  # the certificate; the Makefile
        assert passed.parts["graph"] > fuller.parts["graph"] and passed.parts["lexical"] < fuller.parts["lexical"]
        assert order.index(ref["long"]) < order.index(passed.node.id)
    assert fuller.parts["fuller"] > 0 and fuller.score == round(sum(fuller.parts.values()), 4)


async def test_an_assistants_elaboration_does_not_pass_a_lifted_turn_unless_its_replies_are_asked_for(
    store: Store,
) -> None:
    graph = Graph(store)
    ref = await _remember_with(graph, "assistant")
    found = await Recall(graph).recall(QUESTION, k=20, kinds=["semantic"], record=False)
    order = [r.node.id for r in found]
    assert order.index(ref["a6"]) < order.index(ref["long"]) and "fuller" not in found[order.index(ref["long"])].parts
    asked = "How did you set up nginx, docker, the certificate and the deploy?"
    found = await Recall(graph).recall(asked, k=20, kinds=["semantic"], record=False)
    order = [r.node.id for r in found]
    assert order.index(ref["long"]) < order.index(ref["a6"])
    assert found[order.index(ref["long"])].parts["fuller"] > 0


def test_only_a_match_counted_whole_passes_a_lifted_turn() -> None:
    lifted = (0.9, 1, {"lexical": 0.3, "graph": 0.5, "recency": 0.1})
    fuller = (0.8, 2, {"lexical": 0.7, "graph": 0.0, "recency": 0.1})
    held = {1: 1, 2: 3}
    assert [i for _, i, _ in fuller_first([lifted, fuller], {1}, held, whole={2})] == [2, 1]
    assert [i for _, i, _ in fuller_first([lifted, fuller], {1}, held, whole=set())] == [1, 2]
    assert [i for _, i, _ in fuller_first([lifted, fuller], {1}, {1: 3, 2: 3}, whole={2})] == [1, 2]
    assert [i for _, i, _ in fuller_first([lifted, fuller], set(), held, whole={2})] == [1, 2]
