"""Experience: a run's episode that matches a question strongly lifts the facts its run used into the first places."""

from __future__ import annotations

from loci.memory.engines.base import Engine
from loci.memory.engines.sqlite.store import Store
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.graph.recall import Recall
from loci.memory.jobs.worker import Worker

QUESTION = "Which trail did Ana hike with her brother last spring?"
# Facts the question's words match, some strongly; the answer says none of its words.
MATCHES = [
    "Ana and her brother hiked the Levada trail last spring, in the rain.",
    "Ana hikes most weekends; her brother prefers the beach.",
    "The trail guide Ana bought lists forty walks.",
    "Her brother lent Ana his boots for the hike.",
    "Spring is when Ana plants tomatoes.",
    "Ana's brother lives in Porto.",
    "The hike to the lighthouse took Ana three hours.",
]
ANSWER = "We went up Pico Ruivo at dawn; the view was worth every step."


async def _graph(store: Store | Engine) -> tuple[Graph, list[int], int]:
    graph = Graph(store)
    added = await graph.add_many([NewNode(text) for text in [*MATCHES, ANSWER]])
    ids = [node_id for node_id, _ in added]
    return graph, ids[:-1], ids[-1]


async def _run(graph: Graph, task: str, used: int, outcome: float) -> None:
    """A run asked `task`, was shown `used` and used it; its episode is written and refined."""
    evolution = Evolution(graph)
    step = Step("memory_recall", {"query": task}, recalled=(used,), used=(used,))
    await evolution.episodes.write(Episode(task, [step], outcome=outcome, run_id=None))
    await Worker(evolution.jobs, evolution.handlers()).drain()


async def test_a_fact_a_strongly_matching_run_used_enters_the_first_places(engine_store: Engine) -> None:
    graph, _, answer = await _graph(engine_store)
    before = await Recall(graph).recall(QUESTION, k=20, kinds=["semantic"], record=False)
    assert answer not in [r.node.id for r in before][:5]
    await _run(graph, QUESTION, answer, 1.0)  # the same question, asked before
    found = await Recall(graph).recall(QUESTION, k=5, kinds=["semantic"], record=False)
    order = [r.node.id for r in found]
    assert answer in order
    lifted = found[order.index(answer)]
    assert lifted.parts["lexical"] == 0 and lifted.parts["graph"] > 0.5
    assert order[0] == before[0].node.id  # the best match of the question's own words stays first


async def test_a_run_that_matches_the_question_weakly_lifts_only_as_context(store: Store) -> None:
    graph, _, answer = await _graph(store)
    await _run(graph, "Which boots would suit a rainy Porto walk?", answer, 1.0)
    found = await Recall(graph).recall(QUESTION, k=20, kinds=["semantic"], record=False)
    order = [r.node.id for r in found]
    assert answer not in order[:5]


async def test_a_failed_run_lifts_nothing(store: Store) -> None:
    graph, _, answer = await _graph(store)
    await _run(graph, "Which trail did Ana hike with her brother?", answer, 0.0)
    found = await Recall(graph).recall(QUESTION, k=20, kinds=["semantic"], record=False)
    assert answer not in [r.node.id for r in found][:5]


async def test_a_fact_the_question_matches_keeps_the_parts_its_words_give_it(store: Store) -> None:
    graph, _, _ = await _graph(store)
    before = {r.node.id: r for r in await Recall(graph).recall(QUESTION, k=20, kinds=["semantic"], record=False)}
    weak = next(i for i, r in before.items() if 0 < r.parts["lexical"] < 0.6)  # a match, well below the best
    await _run(graph, QUESTION, weak, 1.0)
    after = {r.node.id: r for r in await Recall(graph).recall(QUESTION, k=20, kinds=["semantic"], record=False)}
    # Its words score by the statistics of the world's rows (the episode's text is not among them), and a run's
    # episode spreads from no place: its parts are the ones it had before the run.
    assert after[weak].parts["lexical"] == before[weak].parts["lexical"] > 0
    assert after[weak].parts["graph"] == before[weak].parts["graph"]
