"""`loci bench evolution` at a tiny size: its documented keys, and what holds at any size (no timing asserts)."""

from __future__ import annotations

import argparse
import json

import pytest

from loci.bench import load
from loci.memory.errors import UsageError


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    load("evolution").add_arguments(parser)
    return parser.parse_args(list(argv))


async def test_bench_evolution_reports_both_arms_and_the_scale_measures() -> None:
    result = await load("evolution").run(_args("--episodes", "100", "--scale-nodes", "1500", "--scale-jobs", "5"))
    assert set(result["static"]) == set(result["evolving"]) == {"50", "100"}
    for key in ("success_gain_at_200", "steps_reduction", "refine_p50_ms", "consolidate_s_100k", "cpu"):
        assert key in result
    assert result["second_consolidation_changes"] == 0
    assert result["first_consolidation"]["changes"] > 0
    assert sum(result["procedures_by_status"].values()) >= 1  # 100 episodes are enough to distil a recipe
    json.dumps(result)


async def test_the_scale_measures_run_on_postgresql_with_the_same_outcome(postgres_url: str) -> None:
    result = await load("evolution").run(
        _args("--episodes", "50", "--scale-nodes", "1500", "--scale-jobs", "5", "--db", postgres_url)
    )
    assert result["scale_engine"] == "postgresql" and result["scale_nodes"] >= 1500
    assert result["first_consolidation"]["changes"] > 0 and result["second_consolidation_changes"] == 0
    with pytest.raises(UsageError, match="the homes are temporary files"):
        await load("evolution").run(_args("--data", "x.json", "--db", postgres_url))
    with pytest.raises(UsageError, match="in an empty home"):
        await load("evolution").run(_args("--episodes", "1", "--scale-nodes", "10", "--db", postgres_url))
