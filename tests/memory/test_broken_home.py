"""A broken home gives one clear StoreError, reads what it can, and is not made worse (real damaged files)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from loci.memory.engines.sqlite.health import check_home, damage_mark
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import StoreError
from loci.memory.graph.export import export_graph
from loci.memory.graph.graph import Graph
from tests.memory.broken_homes import damage, damage_leaves, filled_home, immutable, undecodable_meta


async def test_an_immutable_file_is_read_and_a_write_names_the_file_and_the_cause(tmp_path: Path) -> None:
    path = await filled_home(tmp_path / "loci.db", facts=3)
    with immutable(path):
        async with await Store.open(path) as store:
            assert (await Graph(store).get(1)).text.startswith("fact 0")
            with pytest.raises(StoreError, match="read-only") as caught:
                await Graph(store).remember("one more")
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


async def test_a_home_in_a_read_only_directory_opens_for_reading(tmp_path: Path) -> None:
    path = await filled_home(tmp_path / "home" / "loci.db", facts=3)
    with immutable(path.parent):
        async with await Store.open(path) as store:
            assert store.read_only
            assert (await Graph(store).get(2)).text.startswith("fact 1")
            with pytest.raises(StoreError, match="read-only to this process"):
                await Graph(store).remember("one more")


async def test_a_read_only_home_that_needs_migrating_says_why_it_cannot_open(tmp_path: Path) -> None:
    path = await filled_home(tmp_path / "home" / "loci.db", facts=1)
    async with await Store.open(path) as store:
        await store.write(lambda db: db.execute("DELETE FROM _sqlite_migrations WHERE rowid = 1"))
    with immutable(path.parent), pytest.raises(StoreError, match="needs migrating"):
        await Store.open(path)


async def test_a_damaged_home_refuses_writes_here_and_in_the_next_process(tmp_path: Path) -> None:
    path = await filled_home(tmp_path / "loci.db")
    damage(path)
    async with await Store.open(path) as store:
        with pytest.raises(StoreError, match="is damaged") as caught:
            await Graph(store).stats()
        assert "loci memory export" in str(caught.value)
        with pytest.raises(StoreError, match="will not write"):
            await Graph(store).remember("a new fact")
    assert damage_mark(path).exists()
    async with await Store.open(path) as store:
        with pytest.raises(StoreError, match="will not write"):
            await Graph(store).remember("a new fact")


async def test_a_mark_beside_a_new_file_is_ignored_and_doctor_lifts_it(tmp_path: Path) -> None:
    path = await filled_home(tmp_path / "loci.db", facts=3)
    spare = tmp_path / "spare.db"
    shutil.copy(path, spare)
    damage_mark(path).write_text("1\nintegrity_check: made up\n", encoding="utf-8")
    async with await Store.open(path) as store:  # the mark names another inode
        await Graph(store).remember("written")
    found = check_home(path)
    assert found["problems"] == [] and found["mark_cleared"] is True
    assert "memory_fts" in found["fts_tables"] and not damage_mark(path).exists()


async def test_doctor_check_finds_the_damage(tmp_path: Path) -> None:
    path = await filled_home(tmp_path / "loci.db")
    damage(path)
    found = check_home(path)
    assert found["problems"] and all("\n" not in p for p in found["problems"])


async def test_export_saves_every_readable_row_and_counts_the_rest(tmp_path: Path) -> None:
    path = await filled_home(tmp_path / "loci.db")
    damage_leaves(path, "memory_nodes")
    out = io.StringIO()
    async with await Store.open(path) as store:
        counts = await export_graph(store, out, "json")
    data = json.loads(out.getvalue())
    assert counts["unreadable"] > 0
    assert 0 < counts["nodes"] == len(data["nodes"]) < 400
    assert counts["nodes"] > 300  # the rows past the first damaged page are read one by one


async def test_undecodable_metadata_is_exported_with_replacement(tmp_path: Path) -> None:
    path = await filled_home(tmp_path / "loci.db", facts=3)
    undecodable_meta(path, 2)
    out = io.StringIO()
    async with await Store.open(path) as store:
        with pytest.raises(StoreError, match="damaged"):
            await Graph(store).get(2)
        counts = await export_graph(store, out, "json")
    assert counts == {"nodes": 3, "edges": 2, "unreadable": 0}
    assert json.loads(out.getvalue())["nodes"][1]["meta"] == '{"\ufffd"'
