"""`loci bench latency` on the bundled model: a smoke run of a few turns (the numbers are the bench's job)."""

from __future__ import annotations

import argparse

import pytest

from bench import latency


def test_page_text_varies_and_is_deterministic() -> None:
    pages = [latency.page_text(page, 180, seed=1) for page in range(1, 6)]
    assert pages == [latency.page_text(page, 180, seed=1) for page in range(1, 6)]
    assert len({len(page.split()) for page in pages}) > 1


@pytest.mark.model
async def test_latency_smoke_reports_both_loops() -> None:
    parser = argparse.ArgumentParser()
    latency.add_arguments(parser)
    report = await latency.run(parser.parse_args(["--turns", "3", "--max-tokens", "64"]))
    for key in ("loci_early_seconds", "loci_late_over_early", "naive_early_seconds", "naive_hit_window_at", "loci", "naive", "seconds"):
        assert key in report
    assert len(report["loci"]["seconds"]) == 3
    assert len(report["naive"]["seconds"]) == 3
    assert all(count >= 0 for count in report["loci"]["reused"])
