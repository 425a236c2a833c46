"""The context tools: bounded results, readable errors, and the recursion seam."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from loci.memory.context.store import ContextStore, Target
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import BackendError, ToolError
from loci.tools.context import ContextTools, Scope

DOC = "# Title\n\n" + "".join(f"line {i} of the document\n" for i in range(1, 301))


@pytest.fixture
async def contexts(store: Store) -> ContextStore:
    contexts = ContextStore(store)
    await contexts.add_text("doc", "doc.md", DOC, meta={"format": "markdown"})
    return contexts


async def test_list_outline_read_search(contexts: ContextStore) -> None:
    tools = ContextTools(contexts)
    listing = await tools.context_list()
    [listed] = listing["objects"]
    assert listed["id"] == "doc:1" and listed["lines"] == 302 and listing["total"] == 1
    outline = await tools.context_outline("doc:1")
    assert outline["entries"] == [{"title": "Title", "kind": "heading", "level": 1, "start": 1, "end": 302}]
    read = await tools.context_read("doc:1", 3, 4)
    assert read["text"] == "line 1 of the document\nline 2 of the document\n" and not read["truncated"]
    [hit] = await tools.context_search("line 250", k=1)
    assert hit["id"] == "doc:1" and hit["start"] <= hit["line"] <= hit["end"]


async def test_read_is_bounded_and_reports_the_cut(contexts: ContextStore) -> None:
    tools = ContextTools(contexts, max_read_tokens=100)
    read = await tools.context_read("doc:1")
    assert read["truncated"] and read["next"]["unit"] == "lines"
    assert read["next"]["start"] == read["end"] + 1
    by_tokens = await tools.context_read("doc:1", 1, 10_000, unit="tokens")
    assert by_tokens["truncated"] and by_tokens["next"]["unit"] == "tokens"
    assert by_tokens["unit"] == "tokens" and by_tokens["end"] <= 100


async def test_store_errors_become_tool_errors(contexts: ContextStore) -> None:
    tools = ContextTools(contexts)
    with pytest.raises(ToolError, match="no context object doc:9"):
        await tools.context_read("doc:9")
    with pytest.raises(ToolError, match="outside"):
        await tools.context_read("doc:1", 900)
    with pytest.raises(ToolError, match="does not compile"):
        await tools.context_search("[unclosed", regex=True)


async def test_search_k_is_clamped(contexts: ContextStore) -> None:
    tools = ContextTools(contexts)
    assert len(await tools.context_search("line", k=10_000)) == 8  # one hit per chunk; at most 50
    assert len(await tools.context_search("line", k=0)) == 1


async def test_ask_and_map_without_a_model_say_so(contexts: ContextStore) -> None:
    tools = ContextTools(contexts)
    with pytest.raises(ToolError, match="needs a model"):
        await tools.context_ask("what?", "doc:1")
    with pytest.raises(ToolError, match="needs a model"):
        await tools.context_map("what?", ["doc:1"])


async def test_ask_validates_the_target_before_calling_the_model(contexts: ContextStore) -> None:
    calls: list[Target] = []

    async def asker(question: str, target: Target) -> dict[str, Any]:
        calls.append(target)
        return {"answer": "42", "evidence": [f"{target.id}:5-5"], "status": "ok"}

    tools = ContextTools(contexts, asker)
    for bad, message in [
        ("doc:9", "no context object"),
        ("doc:1:5-900", "outside doc:1"),
        ("doc:1:9-3", "outside"),
        ("doc:1:x", "not a target"),
        ("page:1", "not a context id"),
    ]:
        with pytest.raises(ToolError, match=message):
            await tools.context_ask("q", bad)
    with pytest.raises(ToolError, match="question is empty"):
        await tools.context_ask("  ", "doc:1")
    assert calls == []
    result = await tools.context_ask("what is on line 5?", "doc:1:3-7")
    assert result == {"target": "doc:1:3-7", "answer": "42", "evidence": ["doc:1:5-5"], "status": "ok"}
    assert calls == [Target("doc:1", 3, 7)]


async def test_map_never_exceeds_its_concurrency_limit(contexts: ContextStore) -> None:
    in_flight = peak = 0

    async def asker(question: str, target: Target) -> dict[str, Any]:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        in_flight -= 1
        return {"answer": f"part {target.start}", "status": "ok"}

    tools = ContextTools(contexts, asker, concurrency=3)
    targets = [f"doc:1:{start}-{start + 9}" for start in range(1, 201, 10)]
    with anyio.fail_after(10):
        results = await tools.context_map("summarise", targets)
    assert peak == 3
    assert [r["target"] for r in results] == targets
    assert [r["answer"] for r in results] == [f"part {start}" for start in range(1, 201, 10)]
    stored = await contexts.get(results[0]["id"])
    assert stored.kind == "obs" and stored.meta["target"] == "doc:1:1-10"
    read = await ContextTools(contexts).context_read(results[0]["id"])
    assert "answer: part 1" in read["text"]


async def test_map_validates_every_target_first_and_reports_all_bad_ones(contexts: ContextStore) -> None:
    called = False

    async def asker(question: str, target: Target) -> dict[str, Any]:
        nonlocal called
        called = True
        return {"answer": ""}

    tools = ContextTools(contexts, asker, max_targets=3)
    with pytest.raises(ToolError, match="no context object doc:5.*outside doc:1"):
        await tools.context_map("q", ["doc:1", "doc:5", "doc:1:1-999"])
    with pytest.raises(ToolError, match="the limit is 3"):
        await tools.context_map("q", ["doc:1"] * 4)
    with pytest.raises(ToolError, match="at least one target"):
        await tools.context_map("q", [])
    assert not called


async def test_map_keeps_going_when_one_child_fails(contexts: ContextStore) -> None:
    async def asker(question: str, target: Target) -> dict[str, Any]:
        if target.start == 11:
            raise BackendError("the model server went away")
        return {"answer": "fine", "status": "ok"}

    results = await ContextTools(contexts, asker).context_map("q", ["doc:1:1-10", "doc:1:11-20"])
    assert [r["status"] for r in results] == ["ok", "error"]
    failed = await ContextTools(contexts).context_read(results[1]["id"])
    assert "the model server went away" in failed["text"]


async def test_list_shows_documents_and_notes_unless_asked_for_more(contexts: ContextStore) -> None:
    await contexts.add_text("obs", "a tool result", "result text")
    await contexts.add_text("note", "a note", "what the turns found")
    tools = ContextTools(contexts)
    assert [o["id"] for o in (await tools.context_list())["objects"]] == ["doc:1", "note:3"]
    assert [o["id"] for o in (await tools.context_list(kinds=["obs"]))["objects"]] == ["obs:2"]
    assert (await tools.context_list(kinds=["doc", "obs", "note"], limit=1))["total"] == 3
    with pytest.raises(ToolError, match="unknown kind pdf"):
        await tools.context_list(kinds=["pdf"])


async def test_a_scoped_helper_reads_only_its_span_and_its_own_results(contexts: ContextStore) -> None:
    await contexts.add_text("doc", "other.md", "secret line\n")
    since = await contexts.last_id()
    own = await contexts.add_text("obs", "child result", "the child's own tool result\n")
    tools = ContextTools(contexts, scope=Scope(Target.parse("doc:1:10-20"), since))
    assert [o["id"] for o in (await tools.context_list(kinds=["doc", "obs"]))["objects"]] == ["doc:1", own.id]
    read = await tools.context_read("doc:1", 1, 400)
    assert (read["start"], read["end"]) == (10, 20)
    assert (await tools.context_read(own.id))["text"].startswith("the child's own")
    with pytest.raises(ToolError, match="doc:2 is outside this helper's span"):
        await tools.context_read("doc:2")
    with pytest.raises(ToolError, match="read doc:1:10-20 by lines"):
        await tools.context_read("doc:1", unit="tokens")
    hits = await tools.context_search("document", k=50)
    assert hits and all(h["id"] == "doc:1" and h["start"] <= 20 and h["end"] >= 10 for h in hits)
    with pytest.raises(ToolError, match="outside this helper's span"):
        await tools.context_search("secret", ids=["doc:2"])
    with pytest.raises(ToolError, match="doc:1:1-400 is outside"):
        await tools.context_ask("what?", "doc:1:1-400")
