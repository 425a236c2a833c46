"""Importing hostile files: too deep, the wrong types, not a regular file. One line, exit 2, nothing stored."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from tests.runtime.cli_helpers import loci


def _nodes(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM memory_nodes").fetchone()[0]


def _refused(done: object, *words: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    for word in words:
        assert word in done.stderr


def test_a_deeply_nested_json_file_is_refused_with_one_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    done = loci("memory", "import", str(deep), "--db", str(tmp_path / "loci.db"), home=tmp_path)
    _refused(done, "deep.json", "nested deeper than 100 levels")


def test_deeply_nested_meta_is_refused_with_one_line(tmp_path: Path) -> None:
    meta = '{"a":' * 15_000 + "1" + "}" * 15_000
    done = loci("memory", "add", "a fact", "--meta", meta, "--db", str(tmp_path / "loci.db"), home=tmp_path)
    _refused(done, "--meta", "nested deeper than")


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"type": "entity", "name": "Ana", "entityType": "person", "observations": "notalist"}, '"observations"'),
        ({"type": "entity", "name": "Ana", "entityType": "person", "observations": ["ok", 7]}, '"observations[2]"'),
        ({"type": "entity", "name": ["Ana"], "entityType": "person"}, '"name"'),
        ({"type": "relation", "from": "Ana", "to": {"x": 1}, "relationType": "knows"}, '"to"'),
    ],
)
def test_a_memory_jsonl_record_of_the_wrong_shape_is_refused_by_line_and_nothing_is_stored(
    tmp_path: Path, record: dict, field: str
) -> None:
    path, db = tmp_path / "memory.jsonl", tmp_path / "loci.db"
    good = {"type": "entity", "name": "Bo", "entityType": "person", "observations": ["likes tea"]}
    path.write_text(json.dumps(good) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    done = loci("memory", "import", str(path), "--format", "memory-jsonl", "--db", str(db), home=tmp_path)
    _refused(done, "memory.jsonl line 2", field, "must be")
    assert _nodes(db) == 0  # the file is one transaction: the good line before it is not kept either


def test_a_loci_export_node_of_the_wrong_shape_is_refused_by_number(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    nodes = [{"id": "mem:1", "kind": "semantic", "text": "fine"}, {"id": "mem:2", "kind": "semantic", "text": ["x"]}]
    path.write_text(json.dumps({"nodes": nodes, "edges": []}), encoding="utf-8")
    done = loci("memory", "import", str(path), "--db", str(tmp_path / "loci.db"), home=tmp_path)
    _refused(done, "node 2", '"text" must be a non-empty string, not a list')


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_an_import_of_a_fifo_or_a_device_is_refused_before_it_is_opened(tmp_path: Path, kind: str) -> None:
    source = Path("/dev/zero")
    if kind == "fifo":
        source = tmp_path / "conversation.jsonl"
        os.mkfifo(source)
    done = loci("memory", "import", str(source), "--db", str(tmp_path / "loci.db"), home=tmp_path, timeout=60)
    _refused(done, "not a regular file", "FIFO" if kind == "fifo" else "character device")


def test_a_home_that_is_a_fifo_is_refused_before_sqlite_opens_it(tmp_path: Path) -> None:
    home = tmp_path / "loci.db"
    os.mkfifo(home)
    done = loci("memory", "search", "anything", "--db", str(home), home=tmp_path, timeout=60)
    _refused(done, "is a FIFO", "--db takes a SQLite file path")


def test_a_home_in_a_missing_folder_is_created_and_the_folder_named(tmp_path: Path) -> None:
    db = tmp_path / "missing" / "dir" / "x.db"
    done = loci("memory", "add", "a fact", "--db", str(db), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"created the folder {db.parent}" in done.stderr and db.is_file()
    again = loci("memory", "add", "another fact", "--db", str(db), home=tmp_path)
    assert again.returncode == 0 and "created" not in again.stderr
