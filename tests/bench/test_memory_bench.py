"""The memory benchmarks at a tiny size: each returns its documented keys (no timing asserts)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import anyio
import psycopg
import pytest

from loci.bench import load
from loci.bench.recall.generate import main
from loci.bench.recall.recall import DEFAULT_DATA
from loci.memory.errors import UsageError


def _args(name: str, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    load(name).add_arguments(parser)
    return parser.parse_args(list(argv))


async def test_bench_memory_reports_the_documented_keys() -> None:
    result = await load("memory").run(_args("memory", "--nodes", "600", "--queries", "20", "--batch", "250"))
    for key in (
        "nodes",
        "edges",
        "insert_nodes_per_s",
        "recall_p50_ms",
        "recall_p95_ms",
        "neighbors_p50_ms",
        "db_bytes",
    ):
        assert key in result
    assert result["nodes"] == 600 and result["edges"] > 1_000
    assert result["recall_p95_ms"] >= result["recall_p50_ms"] > 0
    json.dumps(result)


async def test_bench_recall_reports_loci_bm25_and_the_ablation_from_one_run() -> None:
    result = await load("recall").run(_args("recall", "--k", "1,5,10,20"))
    assert result["samples"] == 3 and result["questions"] == 51
    keys = {"recall_at_1", "recall_at_5", "recall_at_10", "recall_at_20", "questions", "by_category"}
    assert keys <= set(result) and keys <= set(result["baseline_bm25"]) and keys <= set(result["ablation_no_graph"])
    assert 0 <= result["recall_at_1"] <= result["recall_at_5"] <= result["recall_at_20"] <= 1
    assert set(result["by_category"]) == {"context", "multi-session", "paraphrase", "temporal"}
    assert result["query_ms_p50"] > 0 and result["baseline_query_ms_p50"] > 0
    # The graph brings the answering turn next to the matched question: the ablation cannot.
    context = result["by_category"]["context"]["recall_at_5"]
    assert context > result["ablation_no_graph"]["by_category"]["context"]["recall_at_5"]
    # Relative dates are stored resolved, so a question about the date finds the turn.
    assert result["by_category"]["temporal"]["recall_at_10"] == 1.0
    json.dumps(result)


async def test_bench_memory_and_recall_run_on_postgresql_and_say_so(postgres_server: str, postgres_url: str) -> None:
    built = await load("memory").run(_args("memory", "--nodes", "300", "--queries", "10", "--db", postgres_url))
    assert built["engine"] == "postgresql" and built["nodes"] == 300 and built["db_bytes"] > 0
    with pytest.raises(UsageError, match="empty database"):
        await load("memory").run(_args("memory", "--nodes", "300", "--queries", "10", "--db", postgres_url))
    fresh = postgres_url + "_recall"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {fresh.rsplit('/', 1)[1]}")
    result = await load("recall").run(_args("recall", "--k", "1,5,10", "--db", fresh))
    assert result["engine"] == "postgresql" and result["samples"] == 3 and result["questions"] == 51
    # The graph's part works on PostgreSQL too: the answering turn comes with the matched question.
    context = result["by_category"]["context"]["recall_at_5"]
    assert context > result["ablation_no_graph"]["by_category"]["context"]["recall_at_5"]
    assert result["by_category"]["temporal"]["recall_at_10"] == 1.0


def test_the_generated_file_is_deterministic_and_in_the_locomo_format(tmp_path: Path) -> None:
    main(["--out", str(tmp_path / "again.json")])
    assert (tmp_path / "again.json").read_text() == DEFAULT_DATA.read_text()
    samples = json.loads(DEFAULT_DATA.read_text())
    for sample in samples:
        conversation = sample["conversation"]
        assert {"speaker_a", "speaker_b", "session_1", "session_1_date_time"} <= set(conversation)
        sessions = [turns for key, turns in conversation.items() if key.startswith("session_")]
        ids = {turn["dia_id"] for turns in sessions if isinstance(turns, list) for turn in turns}
        for qa in sample["qa"]:
            assert qa["evidence"] and set(qa["evidence"]) <= ids


async def test_bench_recall_rejects_a_bad_file_clearly(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    with pytest.raises(UsageError, match="LoCoMo format"):
        await load("recall").run(_args("recall", "--data", str(bad)))
    with pytest.raises(UsageError, match="--k"):
        await load("recall").run(_args("recall", "--k", "a,b"))
    with pytest.raises(UsageError, match="embedder spec"):
        await load("recall").run(_args("recall", "--embed", "word2vec"))


@pytest.mark.slow
async def test_bench_memory_peer_at_a_tiny_size() -> None:
    with anyio.fail_after(300):
        result = await load("memory-peer").run(_args("memory-peer", "--entities", "40", "--searches", "5"))
    for key in ("write_ratio", "entity_write_ratio", "relation_write_ratio", "search_ratio", "reference", "loci"):
        assert key in result
    assert result["exact_name_agreement"] == 1.0 and result["open_agreement"] == 1.0
    assert set(result["loci"]) >= {"write_p50_ms", "entity_write_p50_ms", "relation_write_p50_ms", "search_p50_ms"}
    assert result["loci"]["write_calls"] == 4 + 8  # 40 entities and 80 relations, ten a call
    for kind in ("entity", "relation"):  # the server's CPU for each kind of write, where /proc reads it
        assert result["loci"][f"{kind}_write_cpu_ms_per_call"] >= 0 and f"{kind}_write_cpu_ratio" in result
