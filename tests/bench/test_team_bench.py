"""`loci bench team` at a tiny size: one server, two and four over PostgreSQL, every write accounted for; each
server held to a CPU quota by a cgroup of its own."""

from __future__ import annotations

import argparse
import json
import subprocess

import psycopg
import pytest

from loci.bench import load
from loci.bench.servers.cpu_quota import CpuQuotas, QuotaUnavailable
from loci.memory.errors import UsageError


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    load("team").add_arguments(parser)
    return parser.parse_args(list(argv))


async def test_bench_team_counts_every_acknowledged_write_and_leaves_no_database(postgres_server: str) -> None:
    argv = ("--db", postgres_server, "--clients", "3", "--calls", "8", "--nodes", "60", "--writes", "0.5")
    result = await load("team").run(_args(*argv, "--servers", "1,2", "--quota", "0"))
    one, two, floor = result["postgresql"]["1"], result["postgresql"]["2"], result["sqlite_one_server"]
    for run, servers in ((one, 1), (two, 2), (floor, 1)):
        assert run["servers"] == servers and run["calls"] == 24 and run["errors"] == 0
        assert run["writes_acknowledged"] == run["rows_stored"] == run["writes_acknowledged_distinct"] > 0
        assert set(run["cores_busy"]) == {"servers", "database", "clients"}
    assert all(0 <= share <= 1 for share in one["database_connections"].values())
    assert floor["database_connections"] == {}  # SQLite has no connections to look at
    assert result["over_one"]["2"] > 0 and "on this machine" in result["note"] and result["quota"] == "none"
    assert result["met"]["errors"] and result["met"]["acknowledged_equals_stored"]
    with psycopg.connect(postgres_server) as conn:
        left = conn.execute("SELECT count(*) FROM pg_database WHERE datname LIKE 'loci_team_%'").fetchone()
    assert left == (0,)
    json.dumps(result)


async def test_bench_team_refuses_a_sqlite_path_for_its_database() -> None:
    with pytest.raises(UsageError, match="PostgreSQL server"):
        await load("team").run(_args("--db", "/tmp/loci.db"))


async def test_bench_team_refuses_server_counts_without_one() -> None:
    with pytest.raises(UsageError, match="1 among them"):
        await load("team").run(_args("--servers", "2,4"))


def test_a_quota_holds_a_process_in_a_cgroup_of_its_own_or_says_in_one_line_why_not() -> None:
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        try:
            quotas = CpuQuotas.find()
        except QuotaUnavailable as exc:  # no writable CPU controller here: the benchmark stops with this line
            assert "no writable CPU controller" in str(exc) and "\n" not in str(exc)
            return
        with quotas:
            group = quotas.hold(sleeper.pid, 0.25)
            held = (group / "cgroup.procs").read_text().split()
            limit = (group / "cpu.cfs_quota_us").read_text() if quotas.version == 1 else (group / "cpu.max").read_text()
        assert held == [str(sleeper.pid)] and limit.split()[0] == "25000" and not group.exists()
    finally:
        sleeper.kill()
        sleeper.wait()
