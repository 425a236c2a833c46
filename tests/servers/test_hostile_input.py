"""What an adversarial pass found, each refused with a reason the client can read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from loci.memory.engines.sqlite.store import Store
from loci.runtime.cli.serve import tool_sets
from loci.servers.app import build_app
from loci.servers.memory_compat import build_compat_server
from loci.tools.memory import MAX_QUERY_CHARS


async def test_compat_search_refuses_an_over_long_query(store: Store) -> None:
    async with Client(build_compat_server(store)) as client:
        huge = await client.call_tool("search_nodes", {"query": "x" * (MAX_QUERY_CHARS + 1)})
        fine = await client.call_tool("search_nodes", {"query": "x" * MAX_QUERY_CHARS})
    assert huge.is_error and "over the limit" in huge.content[0].text
    assert not fine.is_error


async def test_recall_refuses_an_over_long_query(store: Store) -> None:
    async with Client(build_app(store, ["memory"])) as client:
        huge = await client.call_tool("memory_recall", {"query": "y" * 5_000_000})
    assert huge.is_error and "over the limit" in huge.content[0].text


async def test_metadata_has_a_size_cap_and_nothing_is_stored_past_it(store: Store) -> None:
    async with Client(build_app(store, ["memory"])) as client:
        big = await client.call_tool("memory_remember", {"text": "a fact", "metadata": {"blob": "z" * 20_000}})
        stats = await client.call_tool("memory_stats", {})
    assert big.is_error and "metadata" in big.content[0].text and "limit" in big.content[0].text
    assert "Traceback" not in big.content[0].text
    assert json.dumps(stats.structured_content).count('"semantic": 1') == 0


@pytest.mark.parametrize("ref", ["mem:9223372036854775808", "mem:99999999999999999999999", "9223372036854775808"])
async def test_ids_past_the_integer_range_name_no_memory(store: Store, ref: str) -> None:
    async with Client(build_app(store, ["memory"])) as client:
        got = await client.call_tool("memory_get", {"id": ref})
        forget = await client.call_tool("memory_forget", {"id": ref})
    assert got.is_error and "no memory mem:92" in got.content[0].text or "no memory mem:99" in got.content[0].text
    assert forget.is_error and "no memory mem:" in forget.content[0].text


async def test_non_ascii_digits_are_not_an_id(store: Store) -> None:
    async with Client(build_app(store, ["memory", "context"])) as client:
        memory = await client.call_tool("memory_get", {"id": "mem:²"})
        context = await client.call_tool("context_read", {"id": "doc:²"})
        huge = await client.call_tool("context_read", {"id": "doc:99999999999999999999"})
    assert memory.is_error and "is not a memory id" in memory.content[0].text
    assert context.is_error and "is not a context id" in context.content[0].text
    assert huge.is_error and "no context object" in huge.content[0].text


async def test_a_nan_edge_weight_is_refused_and_nothing_is_linked(store: Store) -> None:
    async with Client(build_app(store, ["memory"])) as client:
        await client.call_tool("memory_remember", {"text": "first"})
        await client.call_tool("memory_remember", {"text": "second"})
        nan = await client.call_tool("memory_link", {"a": "mem:1", "b": "mem:2", "weight": float("nan")})
        inf = await client.call_tool("memory_link", {"a": "mem:1", "b": "mem:2", "weight": float("inf")})
        ok = await client.call_tool("memory_link", {"a": "mem:1", "b": "mem:2"})
    assert nan.is_error and "weight" in nan.content[0].text
    assert inf.is_error and "weight" in inf.content[0].text
    assert not ok.is_error and ok.structured_content["weight"] == 0.5


def _script(tmp_path: Path, replies: list[dict]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies), encoding="utf-8")
    return f"scripted:{path}"


async def test_run_task_refusals_reach_the_client_with_their_reason(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir(), elsewhere.mkdir()
    (elsewhere / "secret.md").write_text("secret\n", encoding="utf-8")
    (root / "link.md").symlink_to(elsewhere / "secret.md")
    db, options = tmp_path / "loci.db", {"model": _script(tmp_path, [])}
    async with Client(build_app(db, ["run"], tool_sets=tool_sets(), roots=[root], options=options)) as client:
        outside = await client.call_tool("run_task", {"task": "read it", "files": [str(elsewhere / "secret.md")]})
        symlink = await client.call_tool("run_task", {"task": "read it", "files": ["link.md"]})
        missing = await client.call_tool("run_task", {"task": "read it", "files": ["nope.md"]})
        turns = await client.call_tool("run_task", {"task": "read it", "max_turns": -1})
    async with Client(build_app(db, ["run"], tool_sets=tool_sets(), options=options)) as client:
        no_root = await client.call_tool("run_task", {"task": "read it", "files": ["a.md"]})
    assert outside.is_error and "outside the allowed roots" in outside.content[0].text
    assert symlink.is_error and "symlink" in symlink.content[0].text
    assert missing.is_error and "file not found: nope.md" in missing.content[0].text
    assert turns.is_error and "max_turns" in turns.content[0].text
    assert no_root.is_error and "only under a --root" in no_root.content[0].text


async def test_text_that_is_not_valid_unicode_is_refused_readably(store: Store) -> None:
    entity = {"name": "half \ud800", "entityType": "thing", "observations": []}
    async with Client(build_app(store, ["memory"])) as client:
        remembered = await client.call_tool("memory_remember", {"text": "half a pair \ud800"})
    async with Client(build_compat_server(store)) as client:
        created = await client.call_tool("create_entities", {"entities": [entity]})
    for result in (remembered, created):
        assert result.is_error and "not valid Unicode" in result.content[0].text
