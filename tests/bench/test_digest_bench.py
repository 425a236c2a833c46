"""The digest benchmark and its needle set, end to end at tiny sizes."""

from __future__ import annotations

import argparse
from pathlib import Path

from loci.bench.digest import digest as digest_bench
from loci.bench.digest.needles import make_needles, score, write_haystack
from loci.bench.digest.real import FACTS, plant, run_real
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    digest_bench.add_arguments(parser)
    return parser.parse_args(argv)


def words(text: str) -> int:
    return len(text.split())


def test_needles_mix_single_and_two_hop_questions_at_random_depths(tmp_path: Path) -> None:
    needles = make_needles(4)
    assert [n.kind for n in needles] == ["single", "two-hop", "single", "two-hop"]
    assert all(len(n.facts) == len(n.depths) and all(0 <= d < 1 for d in n.depths) for n in needles)
    path = tmp_path / "haystack.md"
    written = write_haystack(path, 5_000, words, needles)
    text = path.read_text()
    assert 5_000 <= written <= 5_000 + 200 and words(text) == written
    for needle in needles:
        for fact, depth in zip(needle.facts, needle.depths, strict=True):
            assert text.count(fact) == 1
            position = words(text[: text.index(fact)]) / written
            assert abs(position - depth) < 0.1
    assert all(text.count(n.answer) == 1 for n in needles if n.kind == "two-hop")  # only in its own fact


def test_score_is_exact_match_after_normalising_and_contains_as_a_looser_measure() -> None:
    assert score(" 4821. ", "4821") == {"exact": True, "contains": True}
    assert score("The code is 4821", "4821") == {"exact": False, "contains": True}
    assert score("48210", "4821") == {"exact": False, "contains": False}


async def test_runtime_cost_reports_both_lengths_and_the_ratios() -> None:
    report = await digest_bench.run(parse(["--tokens", "20000", "--repeat", "1"]))
    keys = {"tokens", "wall_s", "tokens_per_s", "peak_rss_mb", "model_calls"}
    assert keys <= report.keys() and keys <= report["small"].keys()
    assert report["tokens"] >= 20_000 > report["small"]["tokens"] >= 2_000
    assert report["answer_correct"] and report["small"]["answer_correct"]
    assert report["time_ratio_1m_100k"] > 0 and report["rss_ratio_1m_100k"] > 0
    assert set(report["goals"]) == {"wall_s<=30", "peak_rss_mb<=300", "rss_ratio<=1.2", "time_ratio<=11"}


async def test_accuracy_with_the_oracle_streams_every_needle_and_direct_is_the_baseline() -> None:
    report = await digest_bench.run(parse(["--accuracy", "--lengths", "1500,30000", "--needles", "2"]))
    results = report["results"]
    assert report["baseline"] == "direct" and set(results) == {"direct", "stream"}
    assert results["stream"]["1500"]["exact"] == results["stream"]["30000"]["exact"] == 1.0
    assert results["direct"]["1500"]["exact"] == 1.0  # it fits the window
    assert results["direct"]["30000"]["exact"] < 1.0  # cut to the window: the needles past it are lost


async def test_the_real_document_set_plants_each_fact_on_its_line_and_scores_every_method(tmp_path: Path) -> None:
    source = Path(argparse.__file__)  # a real stdlib module, as the set uses
    planted = tmp_path / "planted.py"
    lines = plant(source, planted)
    text = planted.read_text().splitlines()
    assert [text[n - 1] for n in lines] == [fact for fact, _, _ in FACTS] and lines[0] == 2_500

    def reply(request: Request) -> str:  # answers with the first line it was shown, if any
        found = request.messages[-1]["content"].partition("Lines found in the document:\n")[2]
        return found.split(") ", 1)[1].split("\n", 1)[0] if found else "The document does not say."

    model = ScriptedModel([reply], repeat_last=True, context_window=4_096)
    report = await run_real(model, parse(["--real", "--docs", str(source), "--methods", "stream,auto"]))
    assert report["real_n"] == len(FACTS) and report["documents"] == ["argparse.py"]
    assert report["real_stream_hit"] == report["real_auto_hit"] == 1.0
    assert report["real_stream_evidence_hit"] == 1.0 and report["real_stream_done"] == len(FACTS)
    assert {row["method"] for row in report["real_rows"]} == {"stream", "auto"}
