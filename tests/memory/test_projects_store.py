"""Projects in the storage tables: two projects in one home never see each other's rows, `ALL` reads
them all and writes none, and a home made before projects has its rows in `default`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

from loci.memory.context.store import ContextStore
from loci.memory.engines.base import Engine
from loci.memory.engines.sqlite.migrations import migration_sets
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError, StoreError, UsageError
from loci.memory.jobs.queue import Jobs
from loci.memory.projects import ALL
from loci.memory.records.chat import ChatLog
from loci.memory.records.digest_jobs import DigestJobs
from loci.memory.records.runs import Runs

# The steps that brought projects to these tables; a home without them is a home made before projects.
PROJECT_STEPS = (
    "context_by_project",
    "runs_by_project",
    "digest_jobs_by_project",
    "chat_by_project",
    "jobs_by_project",
)


@pytest.fixture
def store(engine_store: Engine) -> Engine:
    """A home on each engine: these tests run on SQLite and on PostgreSQL."""
    return engine_store


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
    for build in (Runs, DigestJobs, ChatLog, ContextStore, lambda store, project: Jobs(store, project=project)):
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


async def test_digest_jobs_of_two_projects_stay_apart(store: Store) -> None:
    alpha, beta = DigestJobs(store, project="alpha"), DigestJobs(store, project="beta")
    a = await alpha.create("what?", "stream", "m", {}, [])
    b = await beta.create("why?", "stream", "m", {}, [])
    assert [(j.id, j.project) for j in await alpha.list()] == [(a, "alpha")]
    with pytest.raises(NotFoundError, match=f"no digest job {b}"):
        await alpha.get(b)
    with pytest.raises(NotFoundError, match=f"no digest job {b}"):
        await alpha.checkpoint(b, {"chunk": 3})
    assert (await beta.get(b)).state == {}
    every = DigestJobs(store, project=ALL)
    assert [j.project for j in await every.list()] == ["beta", "alpha"]
    assert (await every.get(a)).question == "what?"
    with pytest.raises(UsageError, match="name one project"):
        await every.create("q", "stream", "m", {}, [])
    with pytest.raises(UsageError, match="name one project"):
        await every.stop(a, "failed", "no")


async def test_chat_sessions_of_two_projects_stay_apart(store: Store) -> None:
    alpha, beta = ChatLog(store, project="alpha"), ChatLog(store, project="beta")
    a = await alpha.start("m")
    await alpha.add(a.id, "user", "hello")
    b = await beta.start("m")
    assert (await alpha.find()).id == a.id  # the latest of its own project, not beta's newer one
    with pytest.raises(NotFoundError, match=f"no chat session {b.id}"):
        await alpha.find(b.id)
    with pytest.raises(NotFoundError, match=f"no chat session {b.id}"):
        await alpha.add(b.id, "user", "sneaking in")
    assert await beta.messages(a.id) == []
    assert [m.text for m in await alpha.messages(a.id)] == ["hello"]
    every = ChatLog(store, project=ALL)
    assert (await every.find()).project == "beta"
    assert [m.text for m in await every.messages(a.id)] == ["hello"]
    with pytest.raises(UsageError, match="name one project"):
        await every.start("m")
    with pytest.raises(UsageError, match="name one project"):
        await every.add(a.id, "user", "hi")
    with pytest.raises(NotFoundError, match="no chat to resume"):
        await ChatLog(store).find()


async def test_digest_jobs_and_chats_of_a_home_made_before_projects_are_defaults(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    job = {"id": 1, "created": 1.0, "updated": 1.0, "status": "done", "question": "q", "strategy": "stream"}
    old_home(
        path,
        ("digest_jobs", {**job, "model": "m"}),
        ("chat_sessions", {"id": 1, "created": 1.0, "model": "m"}),
        ("chat_messages", {"session_id": 1, "seq": 1, "role": "user", "text": "hi", "created": 1.0}),
    )
    assert "project" not in columns(path, "digest_jobs") | columns(path, "chat_sessions")
    async with await Store.open(path) as store:
        assert [(j.id, j.project) for j in await DigestJobs(store).list()] == [(1, "default")]
        assert (await ChatLog(store).find()).project == "default"
        assert [m.text for m in await ChatLog(store).messages(1)] == ["hi"]
        assert await DigestJobs(store, project="other").list() == []


async def test_jobs_of_two_projects_with_one_key_both_queue(store: Store) -> None:
    alpha, beta = Jobs(store, project="alpha"), Jobs(store, project="beta")
    a = await alpha.enqueue("note", {"n": 1}, key="note:1")
    assert await alpha.enqueue("note", {"n": 1}, key="note:1") is None  # once per project
    b = await beta.enqueue("note", {"n": 2}, key="note:1")
    assert a is not None and b is not None and a != b
    assert (await alpha.counts())["queued"] == 1 and await alpha.last_id() == a
    with pytest.raises(StoreError, match=f"no job {b}"):
        await alpha.get(b)
    job = await alpha.claim()
    assert job is not None and (job.id, job.project, job.payload) == (a, "alpha", {"n": 1})
    assert await alpha.claim() is None  # beta's job is not alpha's to run
    await alpha.complete(job, lambda conn: {"done": "alpha"})
    assert await alpha.results(["note:1"]) == {"note:1": {"done": "alpha"}}
    assert await beta.results(["note:1"]) == {}


async def test_a_queue_for_every_project_claims_any_job_and_queues_none(store: Store) -> None:
    b = await Jobs(store, project="beta").enqueue("note", {})
    every = Jobs(store, project=ALL)
    job = await every.claim()
    assert job is not None and (job.id, job.project) == (b, "beta")
    assert (await every.counts())["running"] == 1
    with pytest.raises(UsageError, match="name one project"):
        await every.enqueue("note", {})
    assert await Jobs(store).claim() is None  # the default project has no job


async def test_jobs_of_a_home_made_before_projects_are_defaults_and_keep_their_ids(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    job = {"kind": "note", "payload": "{}", "max_attempts": 3, "created": 1.0, "updated": 1.0}
    old_home(path, ("jobs", {**job, "id": 7, "key": "note:1"}))
    async with await Store.open(path) as store:
        assert (await Jobs(store).get(7))["project"] == "default"
        assert await Jobs(store).enqueue("note", {}, key="note:1") is None  # its key still holds in default
        assert await Jobs(store, project="other").enqueue("note", {}, key="note:1") is not None
        claimed = await Jobs(store).claim()
        assert claimed is not None and (claimed.id, claimed.project) == (7, "default")
    with sqlite3.connect(path) as conn:
        indexes = {row[1] for row in conn.execute("PRAGMA index_list(jobs)")}
    assert {"jobs_status", "jobs_project"} <= indexes


async def test_context_objects_of_two_projects_stay_apart(store: Store) -> None:
    alpha, beta = ContextStore(store, project="alpha"), ContextStore(store, project="beta")
    a = await alpha.add_text("doc", "harbor", "the harbor has twelve boats")
    b = await beta.add_text("doc", "garage", "the garage has twelve cars")
    assert [(o.id, o.project) for o in await alpha.list()] == [(a.id, "alpha")]
    assert await alpha.last_id() == int(a.id.split(":")[1])
    for reach in (alpha.get, alpha.read, alpha.outline, alpha.forget):
        with pytest.raises(NotFoundError, match=f"no context object {b.id}"):
            await reach(b.id)
    assert [h.id for h in await alpha.search("twelve")] == [a.id]
    assert [h.id for h in await alpha.search("twelve", ids=[b.id])] == []
    assert [h.id for h in await alpha.search(r"twel\w+", regex=True)] == [a.id]
    every = ContextStore(store, project=ALL)
    assert {h.id for h in await every.search("twelve")} == {a.id, b.id}
    assert {h.id for h in await every.search("twelve", regex=True)} == {a.id, b.id}
    assert (await every.get(b.id)).project == "beta"
    assert [o.id for o in await ContextStore(store).list()] == []


async def test_a_store_for_every_project_loads_and_forgets_nothing(store: Store, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one line\n", encoding="utf-8")
    a = await ContextStore(store, project="alpha").add_text("doc", "harbor", "boats")
    every = ContextStore(store, project=ALL, roots=[tmp_path])
    loads = (
        every.add_text("doc", "x", "text"),
        every.add_file(tmp_path / "notes.txt"),
        every.add_directory(tmp_path),
        every.add_path(tmp_path),
        every.forget(a.id),
    )
    for load in loads:
        with pytest.raises(UsageError, match="name one project"):
            await load
    with pytest.raises(UsageError, match="name one project"):
        await store.write(lambda db: every.add_text_now(db.conn, "note", "n", "text"))
    assert [o.id for o in await every.list()] == [a.id]


async def test_one_file_loaded_in_two_projects_is_two_objects(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("the harbor has twelve boats\n", encoding="utf-8")
    alpha, beta = ContextStore(store, project="alpha"), ContextStore(store, project="beta")
    first = await alpha.add_file(path)
    second = await beta.add_file(path)
    assert first.id != second.id and (first.project, second.project) == ("alpha", "beta")
    assert (await alpha.add_file(path)).id == first.id  # unchanged: each project reuses its own
    assert (await beta.add_file(path)).id == second.id


async def test_context_objects_of_a_home_made_before_projects_are_defaults(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    obj = {"id": 1, "kind": "doc", "name": "old", "created": 1.0, "lines": 1, "chars": 9, "tokens": 3}
    chunk = {"id": 1, "object_id": 1, "seq": 0, "start_line": 1, "end_line": 1, "text": "old boats"}
    offsets = {"start_char": 0, "end_char": 9, "start_token": 0, "end_token": 3}
    old_home(path, ("context_objects", obj), ("context_chunks", {**chunk, **offsets}))
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO context_fts (rowid, text) VALUES (1, 'old boats')")
    async with await Store.open(path) as store:
        contexts = ContextStore(store)
        assert [(o.id, o.project) for o in await contexts.list()] == [("doc:1", "default")]
        assert [h.id for h in await contexts.search("boats")] == ["doc:1"]
        assert await ContextStore(store, project="other").search("boats") == []
