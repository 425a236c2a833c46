"""`loci bench recall --data` on BEAM chats: evidence from message ids, a bad chat reported and the others measured."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from loci.bench import load
from loci.bench.recall.data import load_data


def _chat(folder: Path, facts: list[tuple[str, str]], probes: dict) -> None:
    """A BEAM-shaped chat: one batch of user/assistant exchanges, with its probing questions."""
    messages = []
    for number, (said, reply) in enumerate(facts):
        messages.append(
            [
                {"role": "user", "id": 2 * number, "content": said, "time_anchor": "March-15-2024"},
                {"role": "assistant", "id": 2 * number + 1, "content": reply},
            ]
        )
    folder.mkdir(parents=True)
    (folder / "chat.json").write_text(json.dumps([{"batch_number": 1, "turns": messages}]), encoding="utf-8")
    (folder / "probing_questions").mkdir()
    (folder / "probing_questions" / "probing_questions.json").write_text(json.dumps(probes), encoding="utf-8")


FACTS = [
    ("My staging server listens on port 7070 for the budget app.", "Port 7070 it is; let me explain ports at length."),
    ("The dashboard API answers in about 400ms today.", "400ms is fine for a start; caching could help."),
    ("I picked Flask 2.3 with SQLite for the backend.", "Flask and SQLite are a light pair for a small app."),
    ("After caching the dashboard API now answers in about 250ms.", "250ms is a good improvement."),
]
PROBES = {
    "information_extraction": [{"question": "Which port does my staging server listen on?", "source_chat_ids": [0]}],
    "knowledge_update": [
        {
            "question": "How fast does the dashboard API answer?",
            "source_chat_ids": {"original_info": [2], "updated_info": [6]},
        }
    ],
    "contradiction_resolution": [
        {"question": "Which backend did I pick?", "conversation_references": ["chat_id: 4"]},
    ],
    "abstention": [{"question": "What is my cat called?"}],
}


def test_beam_questions_map_their_ids_to_messages_and_name_the_newest(tmp_path: Path) -> None:
    _chat(tmp_path / "1", FACTS, PROBES)
    [sample], failed = load_data(tmp_path / "1")
    assert failed == [] and len(sample.conversation.turns) == 8
    assert sample.conversation.turns[0].said is not None
    by_kind = {q.category: q for q in sample.questions}
    assert set(by_kind) == {"information_extraction", "knowledge_update", "contradiction_resolution"}
    assert by_kind["knowledge_update"].evidence == {"2", "6"} and by_kind["knowledge_update"].newest == {"6"}
    assert by_kind["contradiction_resolution"].evidence == {"4"}


async def test_a_chat_that_fails_is_reported_and_the_others_are_measured(tmp_path: Path) -> None:
    _chat(tmp_path / "chats" / "1", FACTS, PROBES)
    _chat(tmp_path / "chats" / "2", FACTS, PROBES)
    (tmp_path / "chats" / "2" / "chat.json").write_text('[{"batch_number": 1, "turns": 7}]', encoding="utf-8")
    parser = argparse.ArgumentParser()
    load("recall").add_arguments(parser)
    result = await load("recall").run(parser.parse_args(["--data", str(tmp_path / "chats"), "--k", "1,5"]))
    assert result["samples"] == 1 and result["questions"] == 3
    [failed] = result["failed"]
    assert failed["sample"] == "2" and "turns must be a list" in failed["reason"]
    assert result["recall_at_5"] == 1.0 and set(result["by_category"]) == set(PROBES) - {"abstention"}
    assert result["newest_at_1"]["loci"]["questions"] == 2
    assert {"baseline_bm25", "ablation_no_graph"} <= set(result)
    assert set(result["graph_moves"]) == {"all", *result["by_category"]}
