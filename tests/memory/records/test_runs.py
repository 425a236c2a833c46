"""Run records in a real SQLite home: written at the start, completed at the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.memory.engines.base import Engine
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.records.runs import Runs


@pytest.fixture
def store(engine_store: Engine) -> Engine:
    """A home on each engine: these tests run on SQLite and on PostgreSQL."""
    return engine_store


async def test_a_run_is_running_until_it_finishes(store: Store) -> None:
    runs = Runs(store)
    run_id = await runs.start("count the boats", model="scripted", source="run")
    assert (await runs.get(run_id)).status == "running"
    finished = await runs.finish(
        run_id, status="done", answer="12", turns=[{"turn": 1, "tool": "context_search"}], tokens=40
    )
    record = await runs.get(f"run:{run_id}")
    assert finished == record  # what finish gives back is the row as stored
    assert (record.status, record.answer, record.tokens) == ("done", "12", 40)
    assert record.turns == [{"turn": 1, "tool": "context_search"}]
    assert record.finished is not None and record.finished >= record.started


async def test_records_survive_reopening_the_home(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "loci.db") as store:
        run_id = await Runs(store).start("task")
    async with await Store.open(tmp_path / "loci.db") as store:
        listed = await Runs(store).list()
    assert [r.id for r in listed] == [run_id]


async def test_unknown_ids_and_bad_statuses_are_clear_errors(store: Store) -> None:
    runs = Runs(store)
    for bad in (99, "run:x", "run:²", "run:99999999999999999999999"):
        with pytest.raises(NotFoundError, match="no run"):
            await runs.get(bad)
    with pytest.raises(NotFoundError):
        await runs.finish(99, status="done")
    run_id = await runs.start("task")
    with pytest.raises(UsageError, match="a run ends as one of"):
        await runs.finish(run_id, status="running")
