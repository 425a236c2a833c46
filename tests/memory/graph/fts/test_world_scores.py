"""BM25 without a run's records: the world's matches scored as the index scores them when it never held the runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loci.memory.engines.select import use_engine
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.fts.index import text_index
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.graph.pieces import LONG_CHARS
from loci.memory.graph.run_records import run_rows
from tests.conftest import new_database

TURNS = [
    "[20 October 2023] Melanie: That roadtrip this past weekend was insane, the kids loved the canyon.",
    "[13 October 2023] Caroline: Long time no see! My family roadtrip plans fell through again.",
    "[15 July 2023] Caroline: Family support is huge, what else do you guys like doing together?",
    "[17 July 2023] Melanie: We went camping with the family and the kids roasted marshmallows.",
    # A long turn, indexed in pieces: its best piece is its score.
    "[1 August 2023] Melanie: " + " ".join(["We drove along the coast on our family roadtrip."] * (LONG_CHARS // 40)),
]
WORDS = ["roadtrip", "family", "kids"]


async def _home(where: str, runs: list[str]) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """The matches of WORDS in a home of TURNS, after `runs` (each a run's task, written as its episode), scored
    by the index (with the runs in its statistics) and by `world_scores` (without them)."""
    async with use_engine(where) as store:
        graph = Graph(store)
        added = await graph.add_many([NewNode(text) for text in TURNS])
        evolution = Evolution(graph)
        for number, task in enumerate(runs):
            step = Step("memory_recall", {"query": task}, recalled=(added[0][0],), used=(added[0][0],))
            await evolution.episodes.write(Episode(task, [step], outcome=1.0, run_id=100 + number))

        def read(db: Any) -> tuple[list[tuple[int, float]], dict[int, float]]:
            index = text_index(db.conn)
            found = index.matches(db.conn, WORDS, ["semantic"], 10)
            return found, index.world_scores(db.conn, WORDS, found, run_rows(db.conn))

        return await store.read(read)


async def test_world_scores_are_the_index_scores_without_the_runs(
    home: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    runs = [f"What happened to Melanie's kids on their roadtrip number {i}?" for i in range(12)]
    found, world = await _home(home, runs)
    other = (
        str(tmp_path / "alone.db") if home.endswith(".db") else new_database(request.getfixturevalue("postgres_server"))
    )
    alone, none = await _home(other, [])
    assert none == {}  # no run record: the scores are the index's own
    assert sorted(world) == sorted(node_id for node_id, _ in alone) == sorted(node_id for node_id, _ in found)
    for node_id, score in alone:
        assert world[node_id] == pytest.approx(score, rel=1e-9)
    # The runs' words weigh less in the whole index's statistics, so its scores differ from the world's.
    assert any(abs(score - world[node_id]) > 1e-3 for node_id, score in found)
