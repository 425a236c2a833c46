"""`loci bench ui` at a tiny size: it serves a real graph, loads the page in Chromium and reports its keys."""

from __future__ import annotations

import argparse
import json

import pytest

from loci.bench import load
from loci.memory.errors import UsageError

pytestmark = pytest.mark.slow


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    load("ui").add_arguments(parser)
    return parser.parse_args(list(argv))


async def test_bench_ui_reports_the_first_draw_of_a_bounded_piece() -> None:
    result = await load("ui").run(_args("--nodes", "500", "--loads", "2"))
    assert {"nodes", "edges", "drawn_nodes", "loads", "first_draw_s", "first_draw_max_s"} <= set(result)
    assert result["nodes"] == 500 and result["drawn_nodes"] == 300 and result["loads"] == 2
    assert result["first_draw_max_s"] >= result["first_draw_s"] > 0
    json.dumps(result)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--chromium", "/no/such/chromium"], "no Chromium at /no/such/chromium"),
        (["--db", "/no/such.db"], "no such home"),
    ],
)
async def test_bench_ui_refuses_what_it_cannot_run(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        await load("ui").run(_args(*argv))
