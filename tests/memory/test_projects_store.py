"""Projects in the storage tables: two projects in one home never see each other's rows, `ALL` reads
them all and writes none, and a home made before projects has its rows in `default`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

from memory.errors import NotFoundError, UsageError
from memory.projects import ALL
from memory.runs import Runs
from memory.store import Store, migration_sets

# The steps that brought projects to these tables; a home without them is a home made before projects.
PROJECT_STEPS = ("runs_by_project",)


def old_home(path: Path, *rows: tuple[str, dict[str, object]]) -> None:
    """A home migrated up to just before the project steps, holding `rows` (table, values)."""
    db = sqlite_utils.Database(path)
    for migrations in migration_sets():
        migrations.apply(db, stop_before=PROJECT_STEPS)
    for table, values in rows:
        db[table].insert(values)
    db.close()


def columns(path: Path, table: str) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


@pytest.mark.parametrize("bad", ["", "two words", "-x", "a/b", "x" * 65, 7])
async def test_a_bad_project_name_is_a_usage_error(store: Store, bad: object) -> None:
    for build in (Runs,):
        with pytest.raises(UsageError, match="project"):
            build(store, project=bad)


async def test_runs_of_two_projects_stay_apart(store: Store) -> None:
    alpha, beta = Runs(store, project="alpha"), Runs(store, project="beta")
    a = await alpha.start("count the boats")
    b = await beta.start("count the cars")
    assert [r.id for r in await alpha.list()] == [a]
    assert (await alpha.get(a)).project == "alpha"
    with pytest.raises(NotFoundError, match=f"no run {b}"):
        await alpha.get(b)
    with pytest.raises(NotFoundError):
        await alpha.finish(b, status="done")
    assert (await beta.get(b)).status == "running"
    assert [r.project for r in await Runs(store, project=ALL).list()] == ["beta", "alpha"]
    assert (await Runs(store, project=ALL).get(a)).to_dict()["project"] == "alpha"
    with pytest.raises(UsageError, match="name one project"):
        await Runs(store, project=ALL).start("task")
    with pytest.raises(UsageError, match="name one project"):
        await Runs(store, project=ALL).finish(a, status="done")
    assert [r.id for r in await Runs(store).list()] == []


async def test_runs_of_a_home_made_before_projects_are_defaults(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    old_home(path, ("runs", {"id": 1, "task": "old task", "started": 1.0}))
    assert "project" not in columns(path, "runs")
    async with await Store.open(path) as store:
        assert [(r.id, r.project) for r in await Runs(store).list()] == [(1, "default")]
        assert await Runs(store, project="other").list() == []
