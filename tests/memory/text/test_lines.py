"""The one line ranker's counts travel as plain data: a ranker started from them scores as the one that counted."""

from __future__ import annotations

import json

from loci.memory.text import Ranker

LINES = ["Upstream-Name: bzip2", "Copyright: 2001 Person One", "Copyright: 1996 Julian R Seward", "License: GPL-2"]


def test_a_ranker_started_from_anothers_counts_scores_the_same() -> None:
    counting = Ranker({"copyright", "bzip2"})
    for line in LINES:
        counting.count(line, counting.held(line))
    again = Ranker.counted({"copyright", "bzip2"}, json.loads(json.dumps(counting.counts())))
    assert [again.score(line, again.held(line)) for line in LINES] == [
        counting.score(line, counting.held(line)) for line in LINES
    ]
    assert again.weight("bzip2") > again.weight("copyright") > 0


def test_terms_the_counts_do_not_hold_weigh_nothing_and_b_is_the_callers() -> None:
    counts = {"lines": 4, "chars": 80, "spread": {"copyright": 2, "license": 1}}
    ranker = Ranker.counted({"copyright", "bzip2"}, counts, b=0.0)
    assert ranker.spread == {"copyright": 2} and ranker.weight("bzip2") == 0.0
    assert ranker.score("Copyright: a long line " * 5, {"copyright"}) == ranker.weight("copyright")
