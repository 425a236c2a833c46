"""`loci bench team` at a tiny size: one server, two and four over PostgreSQL, every write accounted for; each
server held to a CPU quota by a cgroup of its own."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

import psycopg
import pytest

from loci.bench import load
from loci.bench.servers.cpu_quota import WEIGHT, CpuQuotas, QuotaUnavailable
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
        assert set(run["cores_busy"]) == {"servers", "database", "clients", "other_work"}
        assert len(run["each_server"]["cores"]) == servers and run["each_server"]["quota"] is None
    assert all(0 <= share <= 1 for share in one["database_connections"].values())
    assert floor["database_connections"] == {}  # SQLite has no connections to look at
    assert result["over_one"]["2"] > 0 and "on this machine" in result["note"] and result["quota"].startswith("none")
    assert result["met"]["errors"] and result["met"]["acknowledged_equals_stored"]
    with psycopg.connect(postgres_server) as conn:
        left = conn.execute("SELECT count(*) FROM pg_database WHERE datname LIKE 'loci_team_%'").fetchone()
    assert left == (0,)
    json.dumps(result)


async def test_bench_team_holds_each_server_to_its_quota_in_a_run_of_its_own_or_says_why_not(
    postgres_server: str,
) -> None:
    argv = ("--db", postgres_server, "--clients", "2", "--calls", "6", "--nodes", "30", "--servers", "1", "--no-sqlite")
    try:
        quotas = CpuQuotas.find()
    except QuotaUnavailable:  # no writable CPU controller here: the benchmark stops with one line saying so
        with pytest.raises(UsageError, match="cannot hold each server to --quota 0.25 of a core"):
            await load("team").run(_args(*argv))
        return
    home, runs = _group_of(os.getpid(), quotas), set(quotas.root.glob("loci-bench-*"))
    result = await load("team").run(_args(*argv))
    one = result["postgresql"]["1"]
    assert one["errors"] == 0 and one["writes_acknowledged"] == one["rows_stored"]
    assert one["each_server"]["quota"] == 0.25 and len(one["each_server"]["throttled"]) == 1
    assert 0 <= one["each_server"]["throttled"][0] <= 1 and "cgroup v" in result["quota"]
    # back where it was, and the run's cgroups removed
    assert _group_of(os.getpid(), quotas) == home and set(quotas.root.glob("loci-bench-*")) == runs


async def test_bench_team_refuses_a_sqlite_path_for_its_database() -> None:
    with pytest.raises(UsageError, match="PostgreSQL server"):
        await load("team").run(_args("--db", "/tmp/loci.db"))


async def test_bench_team_refuses_server_counts_without_one() -> None:
    with pytest.raises(UsageError, match="1 among them"):
        await load("team").run(_args("--servers", "2,4"))


def test_a_run_weighs_itself_and_what_it_starts_and_holds_each_server_to_its_quota_or_says_why_not() -> None:
    try:
        quotas = CpuQuotas.find()
    except QuotaUnavailable as exc:  # no writable CPU controller here: the benchmark stops with this line
        assert "no writable CPU controller" in str(exc) and "\n" not in str(exc)
        return
    home = _group_of(os.getpid(), quotas)
    with quotas:
        started = subprocess.Popen(["sleep", "60"])  # started inside the run, as the cluster is
        server = subprocess.Popen(["sleep", "60"])
        try:
            group = quotas.hold(server.pid, 0.25)
            rest = quotas.run / "rest"
            assert _group_of(os.getpid(), quotas) == _group_of(started.pid, quotas) == rest
            assert (group / "cgroup.procs").read_text().split() == [str(server.pid)] and group.parent == quotas.run
            limit = (group / "cpu.cfs_quota_us").read_text() if quotas.version == 1 else (group / "cpu.max").read_text()
            name, weight = WEIGHT[quotas.version]
            assert limit.split()[0] == "25000" and (quotas.run / name).read_text().strip() == weight
            assert quotas.throttled(group) == (0, 0)  # a sleeper never reaches its quota
        finally:
            for process in (started, server):
                process.kill()
                process.wait()
        quotas.release(group)  # the server ended: its cgroup goes, the run's stays
        assert not group.exists() and rest.exists()
    assert _group_of(os.getpid(), quotas) == home and not quotas.run.exists()


def _group_of(pid: int, quotas: CpuQuotas) -> Path:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if (quotas.version == 1 and "cpu" in controllers.split(",")) or (quotas.version == 2 and not controllers):
            return quotas.root / path.lstrip("/")
    raise AssertionError(f"process {pid} is in no CPU cgroup")
