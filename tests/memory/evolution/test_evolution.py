"""Formation, feedback, refinement and consolidation over a real home, on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from loci.memory.engines.base import Engine
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.evolution.episodes import Episode, Step, parse_outcome, step_signature
from loci.memory.evolution.evolution import Evolution
from loci.memory.evolution.params import EvolutionParams
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall
from loci.memory.jobs.worker import Worker

PARAMS = EvolutionParams(distill_n=2, distill_theta=0.6, min_cycles=1)


@pytest.fixture
def evo(engine_store: Engine) -> Evolution:
    return Evolution(Graph(engine_store), PARAMS)


async def facts(evo: Evolution, *texts: str) -> list[int]:
    return [node.id for node, _ in [await evo.graph.remember(t) for t in texts]]


def recipe(a: int, b: int) -> list[Step]:
    return [
        Step("memory_recall", {"query": "port"}, used=(a,)),
        Step("context_read", {"id": "doc:1", "start": 1}, used=(b,)),
    ]


async def drain(evo: Evolution) -> dict[str, int]:
    return await Worker(evo.jobs, evo.handlers()).drain()


async def edge_between(evo: Evolution, a: int, b: int):
    return next((e for e in await evo.graph.edges(a) if {e.src, e.dst} == {a, b} and e.kind == "related"), None)


async def all_related(evo: Evolution, a: int, b: int) -> list[int]:
    sql = "SELECT id FROM memory_edges WHERE kind = 'related' AND ((src = ? AND dst = ?) OR (src = ? AND dst = ?))"
    return await evo.graph.store.read(lambda db: [r[0] for r in db.conn.execute(sql, [a, b, b, a])])


async def test_formation_grounds_the_facts_used_and_links_facts_of_one_step(evo: Evolution) -> None:
    a, b, c = await facts(evo, "alpha listens on port 8080", "alpha runs on host kestrel", "unrelated fact")
    steps = [Step("memory_recall", {"query": "alpha"}, used=(a, b)), Step("memory_get", {"id": "x"}, used=(c,))]
    episode = await evo.episodes.write(Episode("which port does alpha use", steps))
    grounds = {e.dst for e in await evo.graph.edges(episode) if e.kind == "ground"}
    assert grounds == {a, b, c}
    assert (await edge_between(evo, a, b)).weight == PARAMS.form_weight
    assert await edge_between(evo, a, c) is None  # different steps: left to repair, after a success
    node = await evo.graph.get(episode)
    assert node.kind == "episodic" and node.status == "unknown"
    assert (await evo.jobs.counts())["queued"] == 1


async def test_until_feedback_an_episode_counts_as_unknown_not_success(evo: Evolution) -> None:
    a, b = await facts(evo, "fact one about deploys", "fact two about ports")
    await evo.episodes.write(Episode("deploy the thing", recipe(a, b)))
    await drain(evo)
    assert (await evo.graph.get(a)).successes == 0 and (await evo.graph.get(a)).failures == 0
    assert await edge_between(evo, a, b) is None  # no repair without a success


async def test_feedback_drives_repair_and_counts_once(evo: Evolution) -> None:
    a, b = await facts(evo, "fact one about deploys", "fact two about ports")
    episode = await evo.episodes.write(Episode("deploy the thing", recipe(a, b)))
    first = await evo.episodes.feedback(f"mem:{episode}", "good", "worked", bare="mem")
    again = await evo.episodes.feedback(f"mem:{episode}", "good", "worked", bare="mem")
    assert first["counted"] and not again["counted"]
    await drain(evo)
    await drain(evo)
    assert (await evo.graph.get(a)).successes == 1
    assert (await edge_between(evo, a, b)).weight == PARAMS.repair_weight


@pytest.mark.parametrize("bad", [1.5, -0.1, "maybe", float("nan")])
def test_an_outcome_outside_zero_one_is_refused(bad: object) -> None:
    with pytest.raises(UsageError):
        parse_outcome(bad)


async def test_feedback_on_an_unknown_run_or_a_fact_is_a_clear_error(evo: Evolution) -> None:
    [fact] = await facts(evo, "a plain fact")
    with pytest.raises(NotFoundError, match="run 99"):
        await evo.episodes.feedback("run:99", "good")
    with pytest.raises(NotFoundError, match="not an episode"):
        await evo.episodes.feedback(f"mem:{fact}", "good")
    with pytest.raises(NotFoundError, match="no memory"):
        await evo.episodes.feedback("mem:12345", "bad")


async def test_links_that_keep_ending_in_failure_are_weakened_then_dropped(evo: Evolution) -> None:
    a, b = await facts(evo, "stale port 9090 of alpha", "alpha old hostname")
    together = [Step("memory_recall", {"query": "alpha"}, used=(a, b))]
    weights = []
    for i in range(4):
        await evo.episodes.write(Episode(f"alpha task {i}", together, outcome=0.0))
        await drain(evo)
        edge = await edge_between(evo, a, b)
        weights.append(None if edge is None else edge.weight)
    assert PARAMS.drop_below < weights[0] < PARAMS.form_weight
    assert weights[1:] == [None, None, None]  # dropped after two failures, and formation does not bring it back
    [dropped] = [e for e in await all_related(evo, a, b)]
    history = await evo.history(f"edge:{dropped}")
    assert [e["op"] for e in history["events"]] == ["link", "reweight", "reweight", "unlink"]
    assert "interference" in history["events"][-1]["cause"]
    assert (await evo.graph.get(a)).failures == 4


async def test_a_failed_episode_stops_lifting_the_facts_it_used_and_a_success_keeps_lifting(evo: Evolution) -> None:
    # Facts the task does not name: what lifts them is the episode that used them (memory/graph/experience.py).
    stale, right = await facts(evo, "the harbor gate opens at six", "the meadow path opens at nine")
    failed = await evo.episodes.write(
        Episode("route the kestrel", [Step("memory_recall", {"query": "kestrel"}, used=(stale,))], outcome=0.0)
    )
    recall = Recall(evo.graph)

    async def graph_part(node_id: int) -> float:
        found = await recall.recall("route the kestrel", k=5, kinds=["semantic"], record=False)
        return next((r.parts["graph"] for r in found if r.node.id == node_id), 0.0)

    assert await graph_part(stale) > 0  # formation alone: the episode that matches the task lifts what it used
    await drain(evo)
    [ground] = [e for e in await evo.graph.edges(failed) if e.kind == "ground"]
    assert ground.weight == PARAMS.failed_ground == 0.0
    assert await graph_part(stale) == 0
    history = await evo.history(f"edge:{ground.id}")
    assert [e["op"] for e in history["events"]] == ["link", "reweight"]
    won = await evo.episodes.write(
        Episode("route the kestrel", [Step("memory_recall", {"query": "kestrel"}, used=(right,))], outcome=1.0)
    )
    await drain(evo)
    assert [e.weight for e in await evo.graph.edges(won) if e.kind == "ground"] == [PARAMS.ground_weight]
    assert await graph_part(right) > 0 and await graph_part(stale) == 0


async def test_near_duplicates_are_merged_with_their_edges_and_provenance(evo: Evolution) -> None:
    a, b, other = await facts(
        evo, "The alpha service listens on port 8080", "the alpha service listens on port 8080 .", "beta"
    )
    await evo.graph.link(b, other, weight=0.7)
    await evo.episodes.write(Episode("alpha port", [Step("memory_get", {"id": "a"}, used=(a,))], outcome=1.0))
    await drain(evo)
    with pytest.raises(NotFoundError):
        await evo.graph.get(b)
    kept = await evo.graph.get(a)
    assert kept.meta["merged_from"] == [b]
    assert (await edge_between(evo, a, other)).weight == 0.7


async def test_a_recurring_successful_sequence_becomes_a_probationary_procedure_traced_to_its_episodes(
    evo: Evolution,
) -> None:
    a, b = await facts(evo, "deploy uses make release", "release needs the staging key")
    episodes = []
    for task in ("deploy the web app", "deploy the api app"):
        node = await evo.episodes.write(Episode(task, recipe(a, b), outcome=1.0))
        episodes.append(node)
    await drain(evo)
    [proc] = await evo.procedures("deploy the mobile app")
    assert proc["status"] == "probationary"
    assert proc["steps"] == ["memory_recall(query:str)", "context_read(id:str,start:int)"]
    traced = await evo.history(proc["id"])
    assert sorted(int(s["episode"][4:]) for s in traced["sources"]) == episodes
    assert any(e["op"] == "status" and "refine" in e["cause"] for e in traced["events"])


async def test_with_a_model_a_new_procedure_is_described_in_its_own_job(engine_store: Engine) -> None:
    asked: list[str] = []

    async def language(prompt: str) -> str:
        asked.append(prompt)
        return "Use it to deploy an app: make the release with the staging key."

    evo = Evolution(Graph(engine_store), PARAMS, language=language)
    a, b = await facts(evo, "deploy uses make release", "release needs the staging key")
    for task in ("deploy the web app", "deploy the api app"):
        await evo.episodes.write(Episode(task, recipe(a, b), outcome=1.0))
    ran = await drain(evo)
    assert ran["done"] == 3  # two refinements, then the description the second one queued
    [proc] = await evo.procedures("deploy")
    assert proc["text"].startswith("Use it to deploy an app:") and "Steps: memory_recall(query:str)" in proc["text"]
    assert len(asked) == 1 and "deploy the web app" in asked[0]


async def deploy_procedure(evo: Evolution) -> tuple[int, int, int]:
    """Two facts and the probationary procedure distilled from two successful deploys: (a, b, procedure)."""
    a, b = await facts(evo, "deploy uses make release", "release needs the staging key")
    for task in ("deploy the web app", "deploy the api app"):
        await evo.episodes.write(Episode(task, recipe(a, b), outcome=1.0))
    await drain(evo)
    [proc] = await evo.procedures("deploy")
    return a, b, int(proc["id"][4:])


async def test_consolidation_promotes_a_procedure_that_keeps_succeeding_and_is_idempotent(evo: Evolution) -> None:
    a, b, pid = await deploy_procedure(evo)
    for i in range(6):
        steps = [Step("memory_recall", {"query": "deploy"}, used=(a, pid)), *recipe(a, b)[1:]]
        await evo.episodes.write(Episode(f"deploy service {i}", steps, outcome=1.0))
    await drain(evo)
    first = await evo.consolidate()
    second = await evo.consolidate()
    assert first["procedures"] == {"probationary->active": 1}
    assert second["changes"] == 0
    assert (await evo.graph.get(pid)).status == "active"


async def test_a_procedure_that_keeps_failing_is_retired_and_no_longer_offered(evo: Evolution) -> None:
    _, _, pid = await deploy_procedure(evo)
    for i in range(5):
        await evo.episodes.write(Episode(f"deploy x{i}", [Step("memory_get", {"id": "p"}, used=(pid,))], outcome=0))
    await drain(evo)
    summary = await evo.consolidate()
    assert summary["procedures"] == {"probationary->retired": 1}
    assert await evo.procedures("deploy") == []


async def test_consolidation_decays_unused_edges_by_whole_periods_and_prunes_the_weak(evo: Evolution) -> None:
    a, b, c = await facts(evo, "one", "two", "three")
    strong, _ = await evo.graph.link(a, b, weight=0.8)
    weak, _ = await evo.graph.link(a, c, weight=0.06)
    day = PARAMS.decay_period_s
    later = strong.created + 40 * day
    periods = int(later // day) - int(strong.created // day)
    dry = await evo.consolidate(dry_run=True, now=later)
    assert dry["decayed"] == 2 and dry["pruned"] == 1
    assert (await edge_between(evo, a, c)) is not None  # a dry run changes nothing
    done = await evo.consolidate(now=later)
    assert done["changes"] == 3
    assert (await edge_between(evo, a, b)).weight == pytest.approx(0.8 * PARAMS.decay**periods, rel=1e-4)
    assert await edge_between(evo, a, c) is None
    assert (await evo.consolidate(now=later))["changes"] == 0  # the same period: nothing left to do
    assert (await evo.consolidate(now=later + day))["decayed"] == 1  # one more period: one more decay
    history = await evo.history(f"edge:{weak.id}")
    assert [e["op"] for e in history["events"]] == ["link", "decay", "unlink"]
    assert history["events"][-1]["before"]["why"] == "pruned"


def test_the_signature_is_the_tools_and_argument_shapes_of_the_steps_that_worked() -> None:
    steps = [Step("a", {"q": "x", "k": 3}), Step("b", {}, ok=False), Step("c", {"ids": [1]})]
    assert step_signature(steps) == "a(k:int,q:str) > c(ids:list)"


async def test_a_fact_that_helped_a_run_does_not_pass_the_match_the_questions_words_put_first(
    evo: Evolution,
) -> None:
    """A run's episode spreads from no place (memory/graph/run_records.py): what its run used and the question
    matches keeps the place its words give it (lifting it cost `bench evolution --data` recall@5)."""
    worded, helped = await facts(evo, "the kestrel route on the old map", "the kestrel route to the far meadow")
    recall = Recall(evo.graph)

    async def order() -> list[int]:
        found = await recall.recall("route the kestrel", k=2, kinds=["semantic"], record=False)
        return [r.node.id for r in found]

    assert await order() == [worded, helped]
    await evo.episodes.write(
        Episode("route the kestrel", [Step("memory_recall", {"query": "kestrel"}, used=(helped,))], outcome=1.0)
    )
    await drain(evo)
    assert await order() == [worded, helped]


async def test_an_overloaded_fact_is_split_but_a_message_someone_said_stays_whole(engine_store: Engine) -> None:
    evo = Evolution(Graph(engine_store), EvolutionParams(split_chars=80))
    long = "The harbor gate opens at six. " * 3 + "The meadow path closes at nine. " * 3
    fact, _ = await evo.graph.remember(long)
    said, _ = await evo.graph.remember(long.replace("harbor", "river"), meta={"speaker": "assistant", "ref": "7"})
    await evo.episodes.write(
        Episode("open the gates", [Step("memory_recall", {"query": "gate"}, used=(fact.id, said.id))], outcome=1.0)
    )
    await drain(evo)
    with pytest.raises(NotFoundError, match="forgotten"):
        await evo.graph.get(fact.id)
    assert (await evo.graph.get(said.id)).text == long.replace("harbor", "river")
