"""Ranking: the scores and parts of a recall on a small conversation, pinned to the figures they have always had.

Ranking is rewritten for speed from time to time; these figures (from the ranking before any such change)
hold every part of it to the same arithmetic: the rounding of each part, the tie-breaks, spreading activation
along `next`, `entity` and `ground` links, an assistant's turns counted at half, and a restatement moved
above the value it changes."""

from __future__ import annotations

from datetime import date

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.conversation import Turn, remember_conversation
from loci.memory.graph.graph import Graph, NewNode
from loci.memory.graph.ranking import Weights
from loci.memory.graph.recall import Recall

TURNS = [
    Turn("Maya", "I adopted a cat named Pixel from the Lisbon shelter.", "1", "1", date(2023, 5, 8)),
    Turn("assistant", "Congratulations on Pixel! Cats from shelters settle in within a few weeks.", "2", "1"),
    Turn("Maya", "Do you think Pixel needs a vet visit soon?", "3", "1", date(2023, 5, 8)),
    Turn("assistant", "Yes, a first vet visit in the first month is a good idea for a cat.", "4", "1"),
    Turn("Maya", "The API answers in 400ms on the staging server.", "5", "1", date(2023, 5, 8)),
    Turn("Leo", "Maya, did you move to Porto or are you still in Lisbon?", "6", "2", date(2023, 6, 2)),
    Turn("Maya", "Still in Lisbon, but Pixel and I visit Porto every month.", "7", "2", date(2023, 6, 2)),
    Turn("Maya", "The staging server API now answers in 250ms after the cache fix.", "8", "2", date(2023, 6, 2)),
    Turn("Leo", "Nice, the cache fix was my idea.", "9", "2", date(2023, 6, 2)),
]
QUERIES = [
    ("how fast does the staging API answer", None, 2),
    ("where does Maya live with her cat Pixel", None, 2),
    ("what did the assistant say about the vet", None, 2),
    ("Porto Lisbon cache", ["semantic"], 1),
    ("Pixel", ["semantic"], 2),
]


async def ranked(store: Store) -> list[list[tuple[str, float, dict[str, float], bool]]]:
    """Each query's top six on the conversation (and a fact about its cat), by label: a turn's number, a session,
    the fact; the last query again after the first two counted their uses, with frequency weighted."""
    graph = Graph(store)
    ids = await remember_conversation(graph, TURNS)
    [(fact, _)] = await graph.add_many([NewNode("Pixel is a grey cat who sleeps on the Lisbon balcony.")])
    label = {node_id: f"turn {i + 1}" for i, node_id in enumerate(ids)} | {fact: "fact"}
    recall = Recall(graph)
    runs = [(recall, query, kinds, hops, False) for query, kinds, hops in QUERIES]
    runs[:2] = [(recall, query, kinds, hops, True) for _, query, kinds, hops, _ in runs[:2]]
    runs.append((Recall(graph, Weights(frequency=0.2)), *QUERIES[1], False))
    found = []
    for recaller, query, kinds, hops, record in runs:
        top = await recaller.recall(query, k=6, kinds=kinds, hops=hops, record=record)
        found.append(
            [
                (label.get(r.node.id) or f"session {r.node.meta['session']}", r.score, r.parts, r.via is not None)
                for r in top
            ]
        )
    return found


# What the ranking gave before it was rewritten for speed, figure for figure.
PINNED = [
    [
        (
            "turn 8",
            1.1001,
            {"lexical": 0.9398, "vector": 0.0, "graph": 0.0467, "recency": 0.1, "frequency": 0.0, "newer": 0.0136},
            True,
        ),
        ("turn 5", 1.1, {"lexical": 1.0, "vector": 0.0, "graph": 0.0, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 7", 0.8324, {"lexical": 0.0, "vector": 0.0, "graph": 0.7324, "recency": 0.1, "frequency": 0.0}, True),
        (
            "session 2",
            0.7963,
            {"lexical": 0.4738, "vector": 0.0, "graph": 0.2225, "recency": 0.1, "frequency": 0.0},
            True,
        ),
        (
            "session 1",
            0.7824,
            {"lexical": 0.4225, "vector": 0.0, "graph": 0.2599, "recency": 0.1, "frequency": 0.0},
            True,
        ),
        ("turn 9", 0.6295, {"lexical": 0.0, "vector": 0.0, "graph": 0.5295, "recency": 0.1, "frequency": 0.0}, True),
    ],
    [
        ("fact", 1.1, {"lexical": 1.0, "vector": 0.0, "graph": 0.0, "recency": 0.1, "frequency": 0.0}, False),
        ("turn 1", 1.0876, {"lexical": 0.9373, "vector": 0.0, "graph": 0.0503, "recency": 0.1, "frequency": 0.0}, True),
        (
            "session 1",
            0.95,
            {"lexical": 0.8257, "vector": 0.0, "graph": 0.0243, "recency": 0.1, "frequency": 0.0},
            True,
        ),
        ("turn 3", 0.95, {"lexical": 0.0, "vector": 0.0, "graph": 0.85, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 7", 0.8965, {"lexical": 0.0, "vector": 0.0, "graph": 0.7965, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 5", 0.8684, {"lexical": 0.0, "vector": 0.0, "graph": 0.7684, "recency": 0.1, "frequency": 0.0}, True),
    ],
    [
        (
            "session 1",
            0.9824,
            {"lexical": 0.7428, "vector": 0.0, "graph": 0.1396, "recency": 0.1, "frequency": 0.0},
            True,
        ),
        ("turn 3", 0.7314, {"lexical": 0.5427, "vector": 0.0, "graph": 0.0887, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 4", 0.7314, {"lexical": 0.5, "vector": 0.0, "graph": 0.1314, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 2", 0.642, {"lexical": 0.2714, "vector": 0.0, "graph": 0.2706, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 1", 0.6277, {"lexical": 0.0, "vector": 0.0, "graph": 0.5277, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 7", 0.4947, {"lexical": 0.0, "vector": 0.0, "graph": 0.3947, "recency": 0.1, "frequency": 0.0}, True),
    ],
    [
        ("turn 9", 1.1, {"lexical": 0.6963, "vector": 0.0, "graph": 0.3037, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 7", 1.1, {"lexical": 0.6392, "vector": 0.0, "graph": 0.3608, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 6", 1.1, {"lexical": 0.6264, "vector": 0.0, "graph": 0.3736, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 8", 1.1, {"lexical": 0.6264, "vector": 0.0, "graph": 0.3736, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 1", 0.6918, {"lexical": 0.0, "vector": 0.0, "graph": 0.5918, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 3", 0.2798, {"lexical": 0.0, "vector": 0.0, "graph": 0.1798, "recency": 0.1, "frequency": 0.0}, True),
    ],
    [
        ("fact", 1.1, {"lexical": 1.0, "vector": 0.0, "graph": 0.0, "recency": 0.1, "frequency": 0.0}, False),
        ("turn 1", 1.0974, {"lexical": 0.9373, "vector": 0.0, "graph": 0.0601, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 3", 1.0973, {"lexical": 0.9573, "vector": 0.0, "graph": 0.04, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 7", 1.0965, {"lexical": 0.9181, "vector": 0.0, "graph": 0.0784, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 6", 0.95, {"lexical": 0.0, "vector": 0.0, "graph": 0.85, "recency": 0.1, "frequency": 0.0}, True),
        ("turn 5", 0.9257, {"lexical": 0.0, "vector": 0.0, "graph": 0.8257, "recency": 0.1, "frequency": 0.0}, True),
    ],
    [
        ("fact", 1.1819, {"lexical": 1.0, "vector": 0.0, "graph": 0.0, "recency": 0.1, "frequency": 0.0819}, False),
        (
            "turn 1",
            1.1695,
            {"lexical": 0.9373, "vector": 0.0, "graph": 0.0503, "recency": 0.1, "frequency": 0.0819},
            True,
        ),
        (
            "session 1",
            1.0547,
            {"lexical": 0.8257, "vector": 0.0, "graph": 0.0243, "recency": 0.1, "frequency": 0.1047},
            True,
        ),
        ("turn 3", 1.0319, {"lexical": 0.0, "vector": 0.0, "graph": 0.85, "recency": 0.1, "frequency": 0.0819}, True),
        ("turn 7", 1.0012, {"lexical": 0.0, "vector": 0.0, "graph": 0.7965, "recency": 0.1, "frequency": 0.1047}, True),
        ("turn 5", 0.9731, {"lexical": 0.0, "vector": 0.0, "graph": 0.7684, "recency": 0.1, "frequency": 0.1047}, True),
    ],
]


async def test_a_recall_scores_each_part_as_it_always_has(store: Store) -> None:
    assert await ranked(store) == PINNED
