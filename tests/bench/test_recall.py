"""`loci bench recall`: the cells where the graph falls below its own no-graph ablation are named, and counted in
questions."""

from __future__ import annotations

from loci.bench.recall.recall import below_ablation, graph_moves, summary


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


def test_the_questions_the_graph_moved_up_and_down_are_counted_per_cut_off_and_category() -> None:
    loci = [("update", [0.0, 1.0]), ("update", [1.0, 1.0]), ("temporal", [0.0, 0.5])]
    ablation = [("update", [0.0, 0.5]), ("update", [0.0, 1.0]), ("temporal", [0.5, 1.0])]
    moves = graph_moves(loci, ablation, [1, 5])
    assert moves["all"] == {"1": {"up": 1, "down": 1}, "5": {"up": 1, "down": 1}}
    assert moves["update"] == {"1": {"up": 1, "down": 0}, "5": {"up": 1, "down": 0}}
    assert moves["temporal"] == {"1": {"up": 0, "down": 1}, "5": {"up": 0, "down": 1}}
    assert graph_moves(loci, loci, [1, 5])["all"] == {"1": {"up": 0, "down": 0}, "5": {"up": 0, "down": 0}}
