"""`loci home copy`: a SQLite home to PostgreSQL and back, every row with its id, the index made again;
a destination that holds rows, a missing source or a folder refused in one line, exit 2."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loci.memory.context.store import ContextStore
from loci.memory.engines.base import Engine
from loci.memory.engines.select import use_engine
from loci.memory.evolution.episodes import Episode, Step
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall
from loci.memory.jobs.worker import Worker

TABLES = (
    "memory_nodes",
    "memory_edges",
    "memory_events",
    "memory_episodes",
    "memory_pieces",
    "jobs",
    "context_objects",
    "context_chunks",
)
LONG = "the pier log, line after line. " * 700 + "At the very end: the kestrel nests under berth 9."


async def fill(db: str) -> dict[str, int]:
    """A home with facts in two projects, a long fact indexed in pieces, a refined episode and a forgotten fact."""
    async with use_engine(db) as store:
        evolution = Evolution(Graph(store))
        fee, _ = await evolution.graph.remember("the harbor fee is 35 euros a night")
        owner, _ = await evolution.graph.remember("berth 4 belongs to Ada")
        long, _ = await evolution.graph.remember(LONG)
        gone, _ = await evolution.graph.remember("the ferry leaves at noon")
        await evolution.graph.forget(gone.id)
        steps = [Step("memory_recall", {"query": "fee"}, used=(fee.id, owner.id))]
        await evolution.episodes.write(Episode("what is the harbor fee", steps, outcome=1.0))
        await Worker(evolution.jobs, evolution.handlers()).drain()
        shop, _ = await Graph(store, project="shop").remember("the shop opens at nine")
        await ContextStore(store).add_text("doc", "harbor.txt", "Tides\nThe DEFAULT_MOORING is buoy 12.\n")
        return {"fee": fee.id, "long": long.id, "gone": gone.id, "shop": shop.id}


async def rows(store: Engine, table: str) -> list[dict[str, Any]]:
    """The table's rows by column name (the engines may order a table's columns apart)."""
    return await store.read(lambda db: list(db.query(f"SELECT * FROM {table} ORDER BY 1, 2")))


def copy(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`loci home copy ARGV` in a subprocess, in the folder `home` (also its LOCI_HOME)."""
    env = {**os.environ, "LOCI_HOME": str(home)}
    command = [sys.executable, "-m", "loci.runtime.cli.main", "home", "copy", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=home)


async def test_a_sqlite_home_copied_to_postgresql_and_back_keeps_every_row_and_its_id(
    tmp_path: Path, postgres_url: str
) -> None:
    first, back = str(tmp_path / "first.db"), str(tmp_path / "back.db")
    ids = await fill(first)
    there = copy(tmp_path, first, postgres_url, "--json")
    assert there.returncode == 0, there.stderr
    said = json.loads(there.stdout)
    assert said["tables"]["memory_nodes"] == 6 and said["tables"]["memory_pieces"] > 1
    assert said["recalls"] == {"asked": 5, "found": 5, "same": 5, "lost": []}  # the live ones, not `gone`
    async with use_engine(first) as source, use_engine(postgres_url) as target:
        for table in TABLES:
            assert await rows(target, table) == await rows(source, table), table
        shop = Graph(target, project="shop")
        assert [r.node.id for r in await Recall(shop).recall("when does the shop open", record=False)] == [ids["shop"]]
        found = await Recall(Graph(target)).recall("where does the kestrel nest", k=1, record=False)
        assert [r.node.id for r in found] == [ids["long"]]  # its last piece, indexed again
        hits = await ContextStore(target).search("DEFAULT_MOORING")  # the documents' index, made again
        assert [hit.line_text for hit in hits] == ["The DEFAULT_MOORING is buoy 12."]
        history = await Evolution(Graph(target)).history(f"mem:{ids['gone']}")
        assert [event["op"] for event in history["events"]] == ["add", "delete"]
        newest, _ = await Graph(target).remember("a fact written after the copy")
        assert newest.id == 7  # ids and sequences go on past the copied ones
        events = await rows(target, "memory_events")
        assert events[-1]["id"] == len(events) and events[-1]["node"] == newest.id

    home = copy(tmp_path, postgres_url, back)
    assert home.returncode == 0, home.stderr
    lines = home.stdout.splitlines()
    assert lines[0] == f"copied {postgres_url} into {back}" and "memory_nodes: 7 rows" in lines
    assert lines[-1].startswith("verified: every table's rows counted again;")
    async with use_engine(postgres_url) as source, use_engine(back) as target:
        for table in TABLES:
            assert await rows(target, table) == await rows(source, table), table
        found = await Recall(Graph(target)).recall("where does the kestrel nest", k=1, record=False)
        assert [r.node.id for r in found] == [ids["long"]]
        hits = await ContextStore(target).search("DEFAULT_MOORING")  # the documents' index, made again
        assert [hit.line_text for hit in hits] == ["The DEFAULT_MOORING is buoy 12."]


async def test_a_destination_that_holds_rows_is_refused_unless_replaced(tmp_path: Path, postgres_url: str) -> None:
    first = str(tmp_path / "first.db")
    await fill(first)
    async with use_engine(postgres_url) as target:
        await Graph(target).remember("a fact already there")
    refused = copy(tmp_path, first, postgres_url)
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        "loci: the destination is not empty: it holds memory_nodes (1 row), memory_events (1 row);"
        " give --replace to empty it and copy into it"
    ]
    async with use_engine(postgres_url) as target:
        assert [row["text"] for row in await rows(target, "memory_nodes")] == ["a fact already there"]
    replaced = copy(tmp_path, first, postgres_url, "--replace", "--json")
    assert replaced.returncode == 0, replaced.stderr
    async with use_engine(postgres_url) as target:
        assert len(await rows(target, "memory_nodes")) == 6
        assert await Recall(Graph(target)).recall("a fact already there", record=False) == []


async def test_rows_the_destination_has_no_table_for_are_refused_unless_skipped(
    tmp_path: Path, postgres_url: str
) -> None:
    first = str(tmp_path / "first.db")
    await fill(first)
    with sqlite3.connect(first) as conn:
        conn.execute("CREATE TABLE scratch (note TEXT)")  # a table of a later Loci, or of a tool beside it
        conn.execute("INSERT INTO scratch VALUES ('kept aside')")
    refused = copy(tmp_path, first, postgres_url)
    assert refused.returncode == 2
    assert "has no table yet for scratch (1 row)" in refused.stderr and refused.stderr.count("\n") == 1
    skipped = copy(tmp_path, first, postgres_url, "--skip-missing")
    assert skipped.returncode == 0, skipped.stderr
    assert "scratch: left out (the destination has no such table yet)" in skipped.stdout.splitlines()


@pytest.mark.parametrize(
    ("source", "destination", "said"),
    [
        ("missing.db", "out.db", "loci: the source missing.db does not exist; give a home's file or postgresql://..."),
        ("folder", "out.db", "loci: the source folder is a folder; give a home's file (loci.db) or postgresql://..."),
        (
            "full.db",
            "folder",
            "loci: the destination folder is a folder; give a home's file (loci.db) or postgresql://...",
        ),
        ("full.db", "full.db", "loci: the source and the destination are the same home"),
    ],
)
async def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, source: str, destination: str, said: str) -> None:
    (tmp_path / "folder").mkdir()
    await fill(str(tmp_path / "full.db"))
    done = copy(tmp_path, source, destination)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [said]
    assert not (tmp_path / "out.db").exists() and not (tmp_path / "missing.db").exists()


async def test_a_sqlite_destination_that_holds_rows_is_left_as_it_was(tmp_path: Path) -> None:
    first, second = str(tmp_path / "first.db"), str(tmp_path / "second.db")
    await fill(first)
    await fill(second)
    before = sqlite3.connect(second).execute("SELECT count(*) FROM memory_events").fetchone()
    done = copy(tmp_path, first, second)
    assert done.returncode == 2 and done.stderr.startswith("loci: the destination is not empty: it holds memory_nodes")
    assert sqlite3.connect(second).execute("SELECT count(*) FROM memory_events").fetchone() == before


@pytest.mark.parametrize("to_postgres", [True, False], ids=["to postgresql", "to sqlite"])
async def test_a_replaced_destination_keeps_no_index_row_of_its_old_documents(
    tmp_path: Path, postgres_url: str, to_postgres: bool
) -> None:
    sqlite_home = str(tmp_path / "home.db")
    source, target = (sqlite_home, postgres_url) if to_postgres else (postgres_url, sqlite_home)
    await fill(source)
    async with use_engine(target) as store:
        await ContextStore(store).add_text("doc", "old.txt", "The OLD_ANCHOR is chain 7.\nA second line.\n")
    replaced = copy(tmp_path, source, target, "--replace", "--json")
    assert replaced.returncode == 0, replaced.stderr
    async with use_engine(target) as store:
        assert await ContextStore(store).search("OLD_ANCHOR") == []
        assert [hit.id for hit in await ContextStore(store).search("DEFAULT_MOORING")] == ["doc:1"]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda path: path.write_bytes(b""), "is an empty file, not a Loci home"),
        (lambda path: sqlite3.connect(path).execute("CREATE TABLE notes (text TEXT)").close(), "not a Loci home"),
        (lambda path: path.write_bytes(b"not a database at all " * 100), "not a Loci home"),
    ],
    ids=["empty", "another tool's SQLite file", "not SQLite"],
)
async def test_a_source_that_is_not_a_home_is_refused_and_left_as_it_was(tmp_path: Path, make: Any, said: str) -> None:
    source, target = tmp_path / "source.db", str(tmp_path / "target.db")
    make(source)
    await fill(target)
    before = source.read_bytes()
    done = copy(tmp_path, str(source), target, "--replace")
    assert done.returncode == 2 and said in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert source.read_bytes() == before  # no schema written into what was only to be read
    assert sqlite3.connect(target).execute("SELECT count(*) FROM memory_nodes").fetchone()[0] > 0


async def test_the_source_is_never_written(tmp_path: Path) -> None:
    source, target = tmp_path / "source.db", str(tmp_path / "target.db")
    await fill(str(source))
    with sqlite3.connect(source) as conn:  # as a home of an older Loci: a migration it has not had yet
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'create_tokens_table'")
        conn.execute("DROP TABLE tokens")
    before = source.read_bytes()
    done = copy(tmp_path, str(source), target)
    assert done.returncode == 0, done.stderr
    assert source.read_bytes() == before
    assert sqlite3.connect(source).execute("SELECT name FROM sqlite_master WHERE name = 'tokens'").fetchone() is None


@pytest.mark.parametrize("to_postgres", [True, False], ids=["to postgresql", "to sqlite"])
async def test_replace_leaves_another_tool_s_tables_as_they_were(
    tmp_path: Path, postgres_url: str, to_postgres: bool
) -> None:
    source, target = str(tmp_path / "source.db"), postgres_url if to_postgres else str(tmp_path / "target.db")
    await fill(source)
    await fill(target)
    async with use_engine(target) as store:
        await store.write(lambda db: db.conn.execute("CREATE TABLE their_notes (text TEXT)"))
        await store.write(lambda db: db.conn.execute("INSERT INTO their_notes VALUES ('theirs')"))
    replaced = copy(tmp_path, source, target, "--replace", "--skip-missing")
    assert replaced.returncode == 0, replaced.stderr
    async with use_engine(target) as store:
        assert await store.read(lambda db: db.conn.execute("SELECT text FROM their_notes").fetchall()) == [("theirs",)]
