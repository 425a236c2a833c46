"""Each format read from a fixture in its real shape, imported, and imported again (which adds nothing)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall
from loci.memory.imports.files import detect, import_file, read_conversations, sniff_conversations

FIXTURES = Path(__file__).parent / "fixtures"


async def _texts(store: Store, kind: str = "semantic") -> list[str]:
    sql = "SELECT text FROM memory_nodes WHERE deleted IS NULL AND kind = ? ORDER BY id"
    return await store.read(lambda db: [row[0] for row in db.conn.execute(sql, [kind])])


async def _counts(store: Store) -> tuple[int, int, int]:
    def read(db):  # type: ignore[no-untyped-def]
        one = lambda sql: db.conn.execute(sql).fetchone()[0]  # noqa: E731
        return (
            one("SELECT count(*) FROM memory_nodes"),
            one("SELECT count(*) FROM memory_edges"),
            one("SELECT count(*) FROM context_objects"),
        )

    return await store.read(read)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("messages.jsonl", "jsonl"),
        ("locomo.json", "locomo"),
        ("claude_code.jsonl", "claude-code"),
        ("conversations.json", "chatgpt"),
        ("memory.jsonl", "memory-jsonl"),
        ("transcript.txt", "text"),
    ],
)
def test_detect_names_each_format(name: str, fmt: str) -> None:
    path = FIXTURES / name
    assert detect(path.read_text(encoding="utf-8"), str(path)) == fmt


async def test_messages_keep_speakers_dates_and_sessions(store: Store) -> None:
    report = await import_file(Graph(store), FIXTURES / "messages.jsonl")
    [conversation] = report.conversations
    assert conversation.added == 4
    texts = await _texts(store)
    assert texts[0] == "[8 March 2025] user: I adopted a greyhound called Biscuit yesterday. (yesterday = 7 March 2025)"
    assert texts[3].startswith("[20 March 2025] user: Biscuit went to the vet last week")
    sessions = await _texts(store, "episodic")
    assert [s.split(":")[0] for s in sessions] == [
        "Conversation session 1 on 8 March 2025",
        "Conversation session 2 on 20 March 2025",
    ]


async def test_locomo_links_turns_and_sessions(store: Store) -> None:
    graph = Graph(store)
    await import_file(graph, FIXTURES / "locomo.json")
    found = await Recall(graph).recall("When did Maya run the half marathon in Lisbon?", k=3, kinds=["semantic"])
    assert "yesterday = 7 May 2023" in found[0].node.text
    medal = [t for t in await _texts(store) if "finisher medal" in t]
    assert medal and medal[0].startswith("[8 May 2023] Maya: Two hours")
    stats = await graph.stats()
    assert stats["nodes_by_kind"]["episodic"] == 2 and stats["edges_by_kind"]["ground"] == 5


async def test_claude_code_keeps_tools_as_context_not_memory(store: Store) -> None:
    contexts = ContextStore(store)
    report = await import_file(Graph(store), FIXTURES / "claude_code.jsonl", contexts=contexts)
    [conversation] = report.conversations
    assert conversation.key == "claude-code:7f0c1d2e-3a4b-4c5d-8e6f-9a0b1c2d3e4f"
    texts = await _texts(store)
    assert texts == [
        "[2 October 2025] User: The upload test fails on CI about once in ten runs. Can you find out why?",
        "[2 October 2025] Assistant: I'll read the test file first.",
        "[2 October 2025] Assistant: The test binds the fixed port 8080, so it collides with the metrics sidecar"
        " on the CI runners. Binding port 0 fixes the flakiness.",
    ]
    assert not any("Look at the test first" in t for t in texts)
    tools = await contexts.get(conversation.tools or "")
    assert tools.kind == "obs" and tools.meta["cwd"] == "/home/ana/src/uploader"
    span = await contexts.read(tools.id)
    assert "tool call Read" in span.text and "start_server(port=8080)" in span.text


async def test_chatgpt_reads_the_path_to_the_current_node(store: Store) -> None:
    report = await import_file(Graph(store), FIXTURES / "conversations.json")
    [conversation] = report.conversations
    assert conversation.key == "chatgpt:6650f1a2-1111-4222-8333-444455556666"
    texts = await _texts(store)
    assert len(texts) == 4 and not any("abandoned" in t for t in texts)
    assert texts[0] == "[1 June 2024] User: My sourdough starter smells like nail polish. Is it dead?"
    assert (await _texts(store, "episodic"))[0].startswith("Conversation session Sourdough starter on 1 June 2024")


@pytest.mark.parametrize(
    "name", ["messages.jsonl", "locomo.json", "claude_code.jsonl", "conversations.json", "memory.jsonl"]
)
async def test_importing_again_adds_nothing(store: Store, name: str) -> None:
    graph, contexts = Graph(store), ContextStore(store)
    await import_file(graph, FIXTURES / name, contexts=contexts)
    before = await _counts(store)
    again = await import_file(graph, FIXTURES / name, contexts=contexts)
    assert await _counts(store) == before
    assert again.added == 0 and again.nodes == 0 and again.edges == 0


async def test_a_longer_version_adds_only_its_new_turns(store: Store, tmp_path: Path) -> None:
    lines = (FIXTURES / "claude_code.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    graph, contexts = Graph(store), ContextStore(store)
    first = await import_file(graph, path, contexts=contexts)
    assert first.conversations[0].added == 2
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    second = await import_file(graph, path, contexts=contexts)
    assert (second.conversations[0].added, second.conversations[0].already) == (1, 2)
    assert len(await _texts(store)) == 3
    [session] = await _texts(store, "episodic")
    assert "Binding port 0" in session
    edges = await graph.edges(second.conversations[0].nodes[-1])
    assert {e.kind for e in edges} == {"related", "ground"}


async def test_round_trip_of_an_export_and_reference_memory(store: Store, tmp_path: Path) -> None:
    from loci.memory.graph.export import export_graph

    graph = Graph(store)
    await import_file(graph, FIXTURES / "memory.jsonl")
    await import_file(graph, FIXTURES / "locomo.json")
    path = tmp_path / "export.json"
    with path.open("w", encoding="utf-8") as out:
        await export_graph(store, out)
    async with await Store.open(tmp_path / "other.db") as other:
        report = await import_file(Graph(other), path)
        assert report.format == "loci-export"
        copy = tmp_path / "copy.json"
        with copy.open("w", encoding="utf-8") as out:
            await export_graph(other, out)
        assert (await import_file(Graph(other), copy)).nodes == 0
    exported, copied = json.loads(path.read_text()), json.loads(copy.read_text())
    strip = lambda nodes: sorted((n["kind"], n["text"], n["name"]) for n in nodes)  # noqa: E731
    assert strip(exported["nodes"]) == strip(copied["nodes"]) and len(exported["edges"]) == len(copied["edges"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"role": "user", "content": "hi"}\n{"role": "user", "content": \n', "line 2: not JSON"),
        (
            '{"role": "user", "content": "a", "timestamp": "2025-01-01"}\n{"role": "user", "content": "b"}\n',
            "line 2: missing timestamp",
        ),
        (
            '{"type":"user","sessionId":"s","message":{"role":"user","content":"hi"},"uuid":"u"}\n',
            "line 1: missing timestamp",
        ),
        ("just some words\n", "cannot tell its format"),
    ],
)
async def test_bad_input_names_the_line_and_writes_nothing(
    store: Store, tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        await import_file(Graph(store), path)
    assert await _counts(store) == (0, 0, 0)


async def test_a_turn_past_the_old_16000_limit_is_stored_whole_with_the_others(store: Store, tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "locomo.json").read_text())
    data[0]["conversation"]["session_2"][1]["text"] = "word " * 4_000 + "the end"
    path = tmp_path / "long.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    report = await import_file(Graph(store), path)
    [conversation] = report.conversations
    assert conversation.skipped == [] and None not in conversation.nodes
    assert any(text.endswith("word " * 4_000 + "the end") for text in await _texts(store))


async def test_text_lines_keep_continuations_and_start_a_session_per_day(store: Store) -> None:
    await import_file(Graph(store), FIXTURES / "transcript.txt")
    texts = await _texts(store)
    assert texts[1] == "[8 May 2023] Melanie: That sounds powerful. How did it feel?\nIt must have taken courage."
    assert texts[2].endswith("(Last Saturday = 13 May 2023)")
    assert len(await _texts(store, "episodic")) == 2


def test_sniffing_says_none_for_what_is_no_conversation() -> None:
    assert sniff_conversations("just some words\n", "notes.md") is None
    assert sniff_conversations('{"nodes": [], "edges": []}', "export.json") is None
    found = sniff_conversations((FIXTURES / "transcript.txt").read_text(encoding="utf-8"), "t.txt")
    assert found is not None and found[0] == "text" and len(found[1][0].turns) == 3


def test_message_variants_read_too(tmp_path: Path) -> None:
    path = tmp_path / "variants.jsonl"
    path.write_text(
        '{"name": "Ana", "message": "The build is green", "created_at": "2024-02-01T10:00:00"}\n'
        '{"author": {"role": "assistant"}, "text": "Great", "created_at": 1706781700}\n',
        encoding="utf-8",
    )
    fmt, [conversation] = read_conversations(path)
    assert fmt == "jsonl" and [t.speaker for t in conversation.turns] == ["Ana", "assistant"]
    assert conversation.turns[1].said is not None and conversation.turns[1].said.isoformat() == "2024-02-01"


def test_a_memory_file_is_not_a_conversation(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    shutil.copy(FIXTURES / "memory.jsonl", path)
    with pytest.raises(UsageError, match="holds memories"):
        read_conversations(path)
