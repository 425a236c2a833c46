"""`--db postgresql://…` and `$LOCI_DB`: `loci memory` works the same on either engine, `loci doctor` reaches,
migrates and describes a PostgreSQL home; every command still on SQLite refuses a connection string in one
line, exit 2, and makes no file of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loci.memory.location import NOT_ON_POSTGRES
from tests.runtime.cli_helpers import script

NOWHERE = "postgresql://loci@127.0.0.1:1/loci"


def loci(cwd: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, **(env or {})}
    command = [sys.executable, "-m", "loci.runtime.cli.main", *argv]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, env=environ, cwd=cwd, stdin=subprocess.DEVNULL
    )


def test_doctor_migrates_a_postgresql_home_and_says_what_it_holds(postgres_url: str, tmp_path: Path) -> None:
    done = loci(tmp_path, "doctor", "--db", postgres_url, "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["problems"] == [] and "graph.create_graph_tables" in found["migrations"]
    assert found["rows"]["memory_nodes"] == 0 and found["path"] == postgres_url
    again = loci(tmp_path, "doctor", env={"LOCI_DB": postgres_url})
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"home: {postgres_url} (PostgreSQL ")


def test_the_memory_commands_work_alike_on_either_engine(home: str, tmp_path: Path) -> None:
    def memory(*argv: str) -> object:
        done = loci(tmp_path, "memory", *argv, "--json", env={"LOCI_DB": home})
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert memory("add", "berth 4 belongs to Ada")["id"] == "mem:1"
    assert memory("add", "Ada pays 35 euros for the berth", "--link", "mem:1")["id"] == "mem:2"
    assert [hit["id"] for hit in memory("search", "who owns berth 4")] == ["mem:1", "mem:2"]
    memory("update", "mem:1", "berth 5 belongs to Ada", "--reason", "moved")
    memory("forget", "mem:2")
    assert [hit["id"] for hit in memory("search", "berth")] == ["mem:1"]
    memory("restore", "mem:2")
    history = memory("history", "mem:1")
    assert [event["op"] for event in history["events"]] == ["add", "update"]
    exported = memory("export")
    assert [node["text"] for node in exported["nodes"]] == ["berth 5 belongs to Ada", "Ada pays 35 euros for the berth"]
    assert len(exported["edges"]) == 1
    assert memory("stats")["nodes"] == 2


def test_doctor_says_in_one_line_that_a_database_cannot_be_reached(tmp_path: Path) -> None:
    done = loci(tmp_path, "doctor", "--db", NOWHERE)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "Connection refused" in done.stderr and NOWHERE in done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "memory", "--compat"],
        ["hooks", "install", "--client", "claude-code", "--dir", "."],
    ],
)
@pytest.mark.parametrize("given", ["flag", "environment"])
def test_a_command_not_yet_on_postgresql_refuses_a_connection_string(
    tmp_path: Path, argv: list[str], given: str
) -> None:
    if given == "flag":
        done = loci(tmp_path, *argv, "--db", NOWHERE)
    else:
        done = loci(tmp_path, *argv, env={"LOCI_DB": NOWHERE})
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"loci: {NOT_ON_POSTGRES}\n"
    assert list(tmp_path.iterdir()) == []


def test_a_hook_given_a_connection_string_says_so_and_never_fails_its_client(tmp_path: Path) -> None:
    done = loci(tmp_path, "hook", "recall", "--db", NOWHERE)
    assert done.returncode == 0
    assert done.stderr == f"loci: {NOT_ON_POSTGRES}\n" and done.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_run_answers_from_a_document_and_records_the_run_on_either_engine(home: str, tmp_path: Path) -> None:
    doc = tmp_path / "shed.md"
    doc.write_text("# Shed\nThe shed code is 4417.\n", encoding="utf-8")
    model = script(
        tmp_path,
        [
            {"state": "", "tool": "context_search", "arguments": {"query": "shed code"}},
            {"state": "", "answer": "4417", "evidence": [{"id": "doc:1", "start": 2, "end": 2}]},
        ],
    )
    done = loci(
        tmp_path, "run", "What is the shed code?", "--file", str(doc), "--model", model, "--json", env={"LOCI_DB": home}
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["answer"], out["status"], out["run_id"]) == ("4417", "done", 1)
    assert out["evidence"][0]["text"] == "The shed code is 4417.\n"
    # The run's episode: a run record, found when its kind is named (memory/graph/run_records.py).
    episodes = loci(tmp_path, "memory", "search", "shed code", "--kind", "episodic", "--json", env={"LOCI_DB": home})
    assert episodes.returncode == 0 and "shed code" in episodes.stdout
