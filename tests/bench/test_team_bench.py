"""`loci bench team` at a tiny size: one server beside two over PostgreSQL, every write accounted for."""

from __future__ import annotations

import argparse
import json

import psycopg
import pytest

from bench import load
from memory.errors import UsageError


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    load("team").add_arguments(parser)
    return parser.parse_args(list(argv))


async def test_bench_team_counts_every_acknowledged_write_and_leaves_no_database(postgres_server: str) -> None:
    argv = ("--db", postgres_server, "--clients", "3", "--calls", "8", "--nodes", "60", "--writes", "0.5")
    result = await load("team").run(_args(*argv))
    one, two, floor = result["postgresql_one_server"], result["postgresql_two_servers"], result["sqlite_one_server"]
    for run, servers in ((one, 1), (two, 2), (floor, 1)):
        assert run["servers"] == servers and run["calls"] == 24 and run["errors"] == 0
        assert run["writes_acknowledged"] == run["rows_stored"] == run["writes_acknowledged_distinct"] > 0
        assert set(run["cores_busy"]) == {"servers", "database", "clients"}
    assert all(0 <= share <= 1 for share in one["database_connections"].values())
    assert floor["database_connections"] == {}  # SQLite has no connections to look at
    assert result["two_over_one"] > 0 and "on this machine" in result["note"]
    assert result["met"]["errors"] and result["met"]["acknowledged_equals_stored"]
    with psycopg.connect(postgres_server) as conn:
        left = conn.execute("SELECT count(*) FROM pg_database WHERE datname LIKE 'loci_team_%'").fetchone()
    assert left == (0,)
    json.dumps(result)


async def test_bench_team_refuses_a_sqlite_path_for_its_database() -> None:
    with pytest.raises(UsageError, match="PostgreSQL server"):
        await load("team").run(_args("--db", "/tmp/loci.db"))
