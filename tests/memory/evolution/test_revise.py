"""A mistaken verdict corrected: the later one replaces it, and refinement undoes what the earlier one did."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from loci.memory.engines.base import Engine
from loci.memory.engines.select import use_engine
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.evolution.params import EvolutionParams
from loci.memory.graph.graph import Graph
from loci.memory.jobs.worker import Worker
from loci.memory.location import is_postgres

PARAMS = EvolutionParams(distill_n=99)


@pytest.fixture
def fresh_home(home: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A second home on the engine of `home`, empty."""
    if not is_postgres(home):
        return str(tmp_path / "fresh.db")
    with psycopg.connect(request.getfixturevalue("postgres_server"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE fresh_" + home.rsplit("_", 1)[1])
    return home.rsplit("/", 1)[0] + "/fresh_" + home.rsplit("_", 1)[1]


@pytest.fixture
def evo(engine_store: Engine) -> Evolution:
    return Evolution(Graph(engine_store), PARAMS)


async def drain(evo: Evolution) -> dict[str, int]:
    return await Worker(evo.jobs, evo.handlers()).drain()


async def state(evo: Evolution, episode: int) -> dict:
    def read(db) -> dict:
        nodes = db.conn.execute("SELECT id, successes, failures FROM memory_nodes WHERE id != ? ORDER BY id", [episode])
        edges = db.conn.execute(
            "SELECT src, dst, kind, label, weight, co_success, co_failure FROM memory_edges"
            " WHERE deleted IS NULL ORDER BY src, dst, kind, label"
        )
        return {"nodes": nodes.fetchall(), "edges": edges.fetchall()}

    return await evo.graph.store.read(read)


async def setup(evo: Evolution) -> tuple[int, list[int]]:
    ids = [(await evo.graph.remember(t))[0].id for t in ("alpha port 8080", "alpha host kestrel", "beta on mars")]
    a, b, c = ids
    await evo.graph.link(a, c, "related", weight=0.4)
    steps = [Step("memory_recall", {"query": "alpha"}, recalled=(a, b, c), used=(a, c)), Step("read", used=(b,))]
    episode = await evo.episodes.write(Episode("which port does alpha use", steps))
    await drain(evo)
    return episode, ids


async def test_a_later_verdict_replaces_the_earlier_and_undoes_its_effects(evo: Evolution, fresh_home: str) -> None:
    episode, _ = await setup(evo)
    before = await state(evo, episode)
    assert (await evo.episodes.feedback(f"mem:{episode}", "good", bare="mem"))["counted"]
    await drain(evo)
    after_good = await state(evo, episode)
    assert after_good != before  # successes counted, links reinforced and repaired
    revised = await evo.episodes.feedback(f"mem:{episode}", "bad", "that answer was wrong", bare="mem")
    assert revised["replaced"] == 1.0 and revised["outcome"] == 0.0
    await drain(evo)
    bad_now = await state(evo, episode)

    # the same home, had the verdict been bad from the start
    async with use_engine(fresh_home) as store:
        fresh = Evolution(Graph(store), PARAMS)
        other, _ = await setup(fresh)
        await fresh.episodes.feedback(f"mem:{other}", "bad", bare="mem")
        await drain(fresh)
        assert bad_now == await state(fresh, other)
    assert (await evo.episodes.get(f"mem:{episode}"))["outcome"] == 0.0
    assert (await evo.graph.get(episode)).status == "failure"


async def test_revising_back_and_forth_leaves_only_the_last_verdict_counted(evo: Evolution) -> None:
    episode, _ = await setup(evo)
    await evo.episodes.feedback(f"mem:{episode}", "good", bare="mem")
    await drain(evo)
    once_good = await state(evo, episode)
    for verdict in ("bad", "good", "bad", "good"):
        await evo.episodes.feedback(f"mem:{episode}", verdict, bare="mem")
        await drain(evo)
    assert await state(evo, episode) == once_good
    again = await evo.episodes.feedback(f"mem:{episode}", "good", bare="mem")
    assert not again["counted"]
    assert (await drain(evo)).get("done", 0) == 0 and await state(evo, episode) == once_good
