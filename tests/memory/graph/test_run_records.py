"""A run's records are kept apart: after many runs on a conversation, the asked-about turn stays first."""

from __future__ import annotations

from loci.memory.engines.base import Engine
from loci.memory.engines.sqlite.store import Store
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.graph.recall import Recall
from loci.memory.graph.run_records import run_records
from loci.memory.jobs.worker import Worker

TURNS = [
    "[8 May 2023] Maria: I donated my old car to the shelter last week.",
    "[8 May 2023] John: That is generous! What did they do with it?",
    "[9 May 2023] Maria: They use it to drive people to appointments.",
    "[12 May 2023] John: I started kickboxing classes on Tuesdays.",
    "[14 May 2023] Maria: My sister's car broke down again yesterday.",
    "[15 May 2023] John: I bought a red car for my son's birthday.",
]
ASKED = "When did Maria donate her car?"


async def _conversation(store: Store | Engine) -> tuple[Graph, list[int]]:
    graph = Graph(store)
    added = await graph.add_many([NewNode(text, meta={"speaker": text.split("] ")[1].split(":")[0]}) for text in TURNS])
    return graph, [node_id for node_id, _ in added]


async def _runs(graph: Graph, task: str, count: int, used: int) -> list[int]:
    """`count` runs that asked `task` (with a mark each, as the same question asked again would), used `used`."""
    evolution = Evolution(graph)
    episodes = []
    for number in range(count):
        step = Step("memory_recall", {"query": task}, recalled=(used,), used=(used,))
        episode = Episode(task, [step], outcome=1.0, run_id=1000 + number)
        episodes.append(await evolution.episodes.write(episode))
    await Worker(evolution.jobs, evolution.handlers()).drain()
    return episodes


async def test_after_many_runs_the_asked_about_turn_stays_first(engine_store: Engine) -> None:
    graph, turns = await _conversation(engine_store)
    before = [r.node.id for r in await Recall(graph).recall("donated car", k=3, record=False)]
    assert before[0] == turns[0]
    episodes = await _runs(graph, ASKED, 60, turns[0])
    found = await Recall(graph).recall("donated car", k=3, record=False)
    assert [r.node.id for r in found][0] == turns[0]
    assert not {r.node.id for r in found} & set(episodes)  # no run episode among what the search shows


async def test_the_question_asked_again_finds_the_turn_not_the_runs(store: Store) -> None:
    graph, turns = await _conversation(store)
    episodes = await _runs(graph, ASKED, 50, turns[0])
    found = [r.node.id for r in await Recall(graph).recall(ASKED, k=5, record=False)]
    assert found[0] == turns[0]
    assert not set(found) & set(episodes)


async def test_run_episodes_are_shown_when_their_kind_is_asked_for(store: Store) -> None:
    graph, turns = await _conversation(store)
    episodes = await _runs(graph, ASKED, 3, turns[0])
    found = [r.node.id for r in await Recall(graph).recall(ASKED, k=5, kinds=["episodic"], record=False)]
    assert set(found) == set(episodes)


async def test_run_records_names_the_episodes_of_runs_only(store: Store) -> None:
    graph, turns = await _conversation(store)
    [episode] = await _runs(graph, ASKED, 1, turns[0])
    session, _ = await graph.remember("Conversation session 1 on 8 May 2023: a car donated", kind="episodic")
    found = await store.read(lambda db: run_records(db.conn, [*turns, episode, session.id]))
    assert found == {episode}
    assert await store.read(lambda db: run_records(db.conn, [episode], ["episodic"])) == set()


ROADTRIP = [
    "[20 October 2023] Melanie: That roadtrip this past weekend was insane! We went to the canyon with everyone.",
    "[13 October 2023] Caroline: Long time no see Mel! My family and I stayed home all summer.",
    "[15 July 2023] Caroline: Your family sounds great, Mel, what else do you like doing?",
    "[17 July 2023] Melanie: We went camping and the kids roasted marshmallows by the lake.",
    "[18 July 2023] Caroline: The mentoring is going great, I met some amazing young folks.",
]
ROADTRIP_ASKED = "When did Melanie's family go on a roadtrip?"


async def _first(store: Store, runs: list[str], kinds: list[str] | None) -> tuple[int, list[int]]:
    graph = Graph(store)
    added = [node_id for node_id, _ in await graph.add_many([NewNode(text) for text in ROADTRIP])]
    evolution = Evolution(graph)
    for number, task in enumerate(runs):  # runs that used a turn the question is not about
        step = Step("memory_recall", {"query": task}, recalled=(added[4],), used=(added[4],))
        await evolution.episodes.write(Episode(task, [step], outcome=1.0, run_id=500 + number))
    await Worker(evolution.jobs, evolution.handlers()).drain()
    found = await Recall(graph).recall(ROADTRIP_ASKED, k=5, kinds=kinds, record=False)
    return added[0], [r.node.id for r in found]


async def test_runs_that_name_a_word_do_not_lower_it_in_the_turns(tmp_path) -> None:
    """Each run's task is in the full-text index; in BM25's statistics, twenty runs naming "roadtrip" made it
    common, and the turn that says it fell below a turn that only says "family". The turns are scored by the
    statistics of the world's rows alone, so the runs change nothing of their order."""
    runs = [f"Would Melanie go on another roadtrip soon, trip {i}?" for i in range(20)]
    for kinds in (["semantic"], None):
        async with await Store.open(tmp_path / f"alone{bool(kinds)}.db") as store:
            turn, alone = await _first(store, [], kinds)
        async with await Store.open(tmp_path / f"runs{bool(kinds)}.db") as store:
            _, after = await _first(store, runs, kinds)
        assert alone[0] == turn
        assert after[: len(alone)] == alone
