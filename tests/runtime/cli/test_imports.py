"""`loci memory import` as a person runs it (into a home on either engine), and the same `bench recall`
numbers as the bench's own loader."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from loci.bench.recall.data import load_data
from loci.bench.recall.recall import ask_sample, run, summary
from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph
from tests.runtime.cli_helpers import loci

FIXTURES = Path(__file__).parents[2] / "memory" / "imports" / "fixtures"


def test_import_reports_new_turns_then_nothing(tmp_path: Path, home: str) -> None:
    db = home
    first = loci("memory", "import", str(FIXTURES / "claude_code.jsonl"), "--db", db, "--json", home=tmp_path)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["format"] == "claude-code" and report["added"] == 3
    assert report["conversations"][0]["tools"].startswith("obs:")
    again = loci("memory", "import", str(FIXTURES / "claude_code.jsonl"), "--db", db, home=tmp_path)
    assert again.returncode == 0 and "0 new turns, 3 already imported" in again.stdout


def test_a_bad_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"role": "user", "content": "hi"}\n{"role": \n', encoding="utf-8")
    done = loci("memory", "import", str(path), "--db", str(tmp_path / "loci.db"), home=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "broken.jsonl line 2: not JSON" in done.stderr


async def test_imported_locomo_scores_as_the_bench_does(tmp_path: Path) -> None:
    data = FIXTURES / "locomo.json"
    db = tmp_path / "imported.db"
    done = loci("memory", "import", str(data), "--db", str(db), home=tmp_path)
    assert done.returncode == 0, done.stderr
    ks = [1, 5, 10]
    bench = await run(argparse.Namespace(data=data, k="1,5,10", embed="none", db=None))
    scores: dict[str, list[tuple[str, list[float]]]] = {"loci": [], "bm25": [], "no_graph": []}
    times: dict[str, list[float]] = {name: [] for name in scores}
    [sample], _ = load_data(data)
    async with await Store.open(db) as store:
        await ask_sample(Graph(store), sample.questions, "locomo:fixture-1", ks, scores, times)
    mine = summary(scores["loci"], ks)
    assert mine["questions"] == bench["questions"] == 3
    assert {k: mine[k] for k in mine if k.startswith("recall_at")} == {
        k: bench[k] for k in bench if k.startswith("recall_at_")
    }
    assert summary(scores["bm25"], ks) == bench["baseline_bm25"]
