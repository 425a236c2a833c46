"""An episode's text is its task and a mark: recall does not match it by the words of a label."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.from_thread

from loci.memory.engines.base import Engine
from loci.memory.engines.postgres.store import PgStore
from loci.memory.evolution.episodes import Episode, Episodes, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall
from loci.memory.jobs.queue import Jobs


async def test_episodes_are_found_by_their_task_not_by_episode_or_run(engine_store: Engine) -> None:
    graph = Graph(engine_store)
    episodes = Evolution(graph).episodes
    step = Step("context_search", {"query": "bzip2"})
    await episodes.write(Episode("Who holds the copyright of bzip2?", [step], run_id=14))
    await episodes.write(Episode("Who holds the copyright of bzip2?", [step], run_id=16))  # the mark tells them apart
    await episodes.write(Episode("tidy the notes", [step]))
    recall = Recall(graph)
    assert await recall.recall("which run was the episode", k=5, kinds=["episodic"], record=False) == []
    # A run's episodes are found when their kind is asked for (memory/graph/run_records.py), and only then.
    assert await recall.recall("bzip2 copyright", k=5, record=False) == []
    found = await recall.recall("bzip2 copyright", k=5, kinds=["episodic"], record=False)
    texts = sorted(r.node.text for r in found)
    assert texts == ["Who holds the copyright of bzip2? [r14]", "Who holds the copyright of bzip2? [r16]"]


async def test_two_servers_writing_episodes_at_once_mark_them_apart(postgres_url: str) -> None:
    """The first server's episode is written and its transaction held open (its refinement job queued) while the
    second server writes another: the second counts the episodes after the first has committed, as SQLite's one
    writer would, so the two marks differ."""
    written, release = anyio.Event(), anyio.Event()

    class HeldJobs(Jobs):
        def add(self, conn: Any, *args: Any, **kwargs: Any) -> Any:
            added = super().add(conn, *args, **kwargs)
            anyio.from_thread.run_sync(written.set)
            anyio.from_thread.run(release.wait)
            return added

    def waits_on_a_lock(conn: Any) -> bool:
        sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        return conn.execute(sql).fetchone()[0] > 0

    step = Step("context_search", {"query": "bzip2"})
    second_done = anyio.Event()

    async def second(store: PgStore) -> None:
        await Episodes(Graph(store)).write(Episode("tidy the notes", [step]))
        second_done.set()

    with anyio.fail_after(90):
        async with await PgStore.open(postgres_url) as one, await PgStore.open(postgres_url) as two:
            held = Episodes(Graph(one), jobs=HeldJobs(one, project="default"))
            async with anyio.create_task_group() as group:
                group.start_soon(held.write, Episode("sort the mail", [step]))
                await written.wait()
                group.start_soon(second, two)
                while not second_done.is_set() and not await one.read(waits_on_a_lock):
                    pass
                release.set()
            sql = "SELECT text FROM memory_nodes WHERE kind = 'episodic' ORDER BY id"
            texts = [text for (text,) in await one.read(lambda conn: conn.execute(sql).fetchall())]
    assert sorted(texts) == ["sort the mail [e1]", "tidy the notes [e2]"]
