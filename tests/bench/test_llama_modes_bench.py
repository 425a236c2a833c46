"""`loci bench llama-modes`: both modes measured in children; a child killed by a signal is reported, not fatal."""

from __future__ import annotations

import argparse

import pytest

from loci.bench.model import llama_modes


def test_a_crashed_mode_is_reported_and_left_out_of_the_ratios() -> None:
    off = llama_modes._summary(
        [
            {"prompt_tokens_per_second": 100.0, "generation_tokens_per_second": 50.0},
            {"prompt_tokens_per_second": 120.0, "generation_tokens_per_second": 40.0},
        ],
        256,
    )
    on = llama_modes._summary([{"crashed": "SIGILL"}, {"failed": "exited with 1: boom"}], 256)
    assert off == {
        "prompt_tokens": 256,
        "runs": 2,
        "survived": 2,
        "prompt_tokens_per_second": 110.0,
        "generation_tokens_per_second": 45.0,
    }
    assert on == {
        "prompt_tokens": 256,
        "runs": 2,
        "survived": 0,
        "crashed": ["SIGILL"],
        "failed": ["exited with 1: boom"],
    }
    assert llama_modes._ratios(on, off) is None
    faster = {"prompt_tokens_per_second": 220.0, "generation_tokens_per_second": 45.0}
    assert llama_modes._ratios(faster, off) == {"prompt_tokens_per_second": 2.0, "generation_tokens_per_second": 1.0}


@pytest.mark.model
async def test_both_modes_run_in_children_and_the_off_mode_survives() -> None:
    parser = argparse.ArgumentParser()
    llama_modes.add_arguments(parser)
    report = await llama_modes.run(parser.parse_args(["--prompt-tokens", "48", "--tokens", "2", "--repeats", "1"]))
    assert report["off_long"]["survived"] == 1 and report["off_long"]["prompt_tokens_per_second"] > 0
    assert report["off_short"]["survived"] == 1
    for name in ("on_long", "on_short"):
        assert report[name]["survived"] == 1 or report[name]["crashed"], report[name]
    if report["on_long"]["survived"]:
        assert report["on_over_off_long"]["prompt_tokens_per_second"] > 0
