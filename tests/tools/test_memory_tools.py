"""The memory verbs as the model calls them: ids as mem:N, clear errors, explained recall."""

from __future__ import annotations

import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.graph.graph import Graph
from loci.memory.graph.records import MAX_TEXT_CHARS
from loci.tools.memory import MemoryTools
from loci.tools.shown import MAX_SHOWN_CHARS


@pytest.fixture
def tools(store: Store) -> MemoryTools:
    return MemoryTools(Graph(store))


async def test_remember_recall_get_round_trip(tools: MemoryTools) -> None:
    fact = await tools.memory_remember("The staging database is on db-2", metadata={"source": "ops"})
    assert fact == {"id": "mem:1", "created": True, "uses": 0, "linked": []}
    episode = await tools.memory_remember("Migrated staging", kind="episodic", links=[fact["id"]])
    assert episode["linked"] == ["mem:1"]
    [hit, *_] = await tools.memory_recall("where is the staging database?", k=2)
    assert hit["id"] == "mem:1" and hit["score"] > 0 and "lexical" in hit["parts"]
    shown = await tools.memory_get("mem:1")
    assert shown["meta"] == {"source": "ops"} and shown["uses"] == 1
    assert shown["edges"][0]["kind"] == "ground" and shown["edge_count"] == 1


async def test_remembering_twice_returns_the_existing_id(tools: MemoryTools) -> None:
    first = await tools.memory_remember("Rust 1.80 stabilised LazyLock")
    again = await tools.memory_remember("rust 1.80 stabilised lazylock")
    assert again["id"] == first["id"] and again["created"] is False and again["uses"] == 1


async def test_update_forget_and_neighbors(tools: MemoryTools) -> None:
    a = await tools.memory_remember("alpha fact")
    b = await tools.memory_remember("beta fact", links=[a["id"]])
    c = await tools.memory_remember("gamma fact")
    link = await tools.memory_link(b["id"], c["id"], weight=0.9)
    assert link["created"] and link["weight"] == 0.9 and link["src"] == b["id"]
    near = await tools.memory_neighbors(b["id"])
    assert [n["id"] for n in near] == [c["id"], a["id"]]
    assert [n["id"] for n in await tools.memory_neighbors(a["id"], depth=2)] == [b["id"], c["id"]]
    assert (await tools.memory_update(a["id"], "alpha fact, revised"))["text"] == "alpha fact, revised"
    assert await tools.memory_forget(c["id"]) == {"id": c["id"], "forgotten": True}
    assert [n["id"] for n in await tools.memory_neighbors(b["id"])] == [a["id"]]
    stats = await tools.memory_stats()
    assert stats["nodes"] == 2 and stats["edges"] == 1


async def test_bad_input_gives_clear_errors(tools: MemoryTools) -> None:
    with pytest.raises(UsageError, match="empty"):
        await tools.memory_remember("   ")
    with pytest.raises(NotFoundError, match="mem:77"):
        await tools.memory_get("mem:77")
    with pytest.raises(NotFoundError, match="not a memory id"):
        await tools.memory_forget("doc:1")
    with pytest.raises(UsageError, match="over the limit"):
        await tools.memory_remember("w" * (MAX_TEXT_CHARS + 1))
    assert await tools.memory_recall('NEAR( "x') == []


async def test_a_huge_memory_is_shown_in_bounded_parts_that_read_back_whole(tools: MemoryTools) -> None:
    text = "lighthouse keeper log " + "".join(f"entry {i} the lamp was trimmed. " for i in range(40_000))
    stored = await tools.memory_remember(text)
    [hit] = await tools.memory_recall("lighthouse keeper", k=1)
    assert len(hit["text"]) == MAX_SHOWN_CHARS and hit["text_chars"] == len(text)
    assert hit["next_offset"] == MAX_SHOWN_CHARS
    parts, offset = [], 0
    while offset is not None:
        shown = await tools.memory_get(stored["id"], offset=offset)
        assert len(shown["text"]) <= MAX_SHOWN_CHARS and shown["text_chars"] == len(text)
        parts.append(shown["text"])
        offset = shown.get("next_offset")
    assert "".join(parts) == text
    small = await tools.memory_get((await tools.memory_remember("a short fact"))["id"])
    assert small["text"] == "a short fact" and "text_chars" not in small and "next_offset" not in small
