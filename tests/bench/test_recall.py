"""`loci bench recall`: the cells where the graph falls below its own no-graph ablation are named."""

from __future__ import annotations

from bench.recall import below_ablation, summary


def test_the_graph_is_named_where_it_falls_below_its_ablation_in_a_judged_category() -> None:
    many = [("update", [0.0, 1.0])] * 9 + [("update", [0.0, 0.0])]
    few = [("rare", [0.0, 0.0])]
    loci = summary(many + few, [1, 5])
    ablation = summary([("update", [0.0, 1.0])] * 10 + [("rare", [1.0, 1.0])], [1, 5])
    below = below_ablation(loci, ablation, [1, 5])
    assert below == [
        {"category": "all", "k": 1, "loci": 0.0, "no_graph": 0.0909},
        {"category": "all", "k": 5, "loci": 0.8182, "no_graph": 1.0},
        {"category": "update", "k": 5, "loci": 0.9, "no_graph": 1.0},
    ]
    assert below_ablation(ablation, ablation, [1, 5]) == []
