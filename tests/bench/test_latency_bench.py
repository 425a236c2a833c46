"""`loci bench latency` on the bundled model: a short run keeps the bench's promises (the timings are its job).

What it promises, whatever the machine: Loci's prompt fits the window and,
after the first turn, most of it comes from llama.cpp's KV cache; the naive
loop's prompt grows with every turn.
"""

from __future__ import annotations

import argparse
import json

import pytest

from loci.bench.model import latency
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel


def test_page_text_varies_and_is_deterministic() -> None:
    pages = [latency.page_text(page, 180, seed=1) for page in range(1, 6)]
    assert pages == [latency.page_text(page, 180, seed=1) for page in range(1, 6)]
    assert len({len(page.split()) for page in pages}) > 1


async def test_turn_pages_sets_each_bench_call_to_the_next_page_and_leaves_other_replies() -> None:
    call = json.dumps({"state": "s", "tool": latency.TOOL, "arguments": {"page": 1}})
    answer = json.dumps({"state": "s", "answer": "done"})
    model = latency.TurnPages(ScriptedModel([call, call, "not json", answer]))
    texts = [(await model.generate(Request([{"role": "user", "content": "go"}]))).text for _ in range(4)]
    assert [json.loads(text)["arguments"]["page"] for text in texts[:2]] == [1, 2]
    assert texts[2:] == ["not json", answer]


@pytest.mark.model
async def test_latency_keeps_the_prompt_bounded_and_cached_while_naive_grows() -> None:
    parser = argparse.ArgumentParser()
    latency.add_arguments(parser)
    report = await latency.run(parser.parse_args(["--turns", "3", "--max-tokens", "64"]))
    loci, naive = report["loci"], report["naive"]
    assert len(loci["seconds"]) == len(naive["seconds"]) == 3 and report["naive_hit_window_at"] is None
    assert max(loci["prompt"]) < report["context_window"]
    assert all(reused > evaluated for reused, evaluated in zip(loci["reused"][1:], loci["evaluated"][1:], strict=True))
    assert naive["prompt"] == sorted(set(naive["prompt"]))  # strictly growing: every turn adds to the history
    assert report["loci_early_seconds"] > 0 and report["loci_late_over_early"] is not None
    assert 0 < report["median_turn_s"] <= report["p95_turn_s"] and report["note_rewrites"]["count"] == 0
