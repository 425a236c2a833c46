"""`context_load` and `context_forget` from an MCP client: `loci serve` over stdio, the SDK's `Client`."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.tools.loading import LoadingTools


def serve(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "loci.runtime.cli.main", "serve", *args])


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "deploy.md").write_text("# Deploy\nThe staging cluster is called heron.\n", encoding="utf-8")
    (root / "docs" / "notes.txt").write_text("Backups run at 02:00 every night.\n", encoding="utf-8")
    (root / "docs" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    outside = tmp_path / "secrets"
    outside.mkdir()
    (outside / "key.txt").write_text("the private key\n", encoding="utf-8")
    (root / "docs" / "escape").symlink_to(outside / "key.txt")
    (root / "link-out").symlink_to(outside)
    return root, outside


async def test_a_client_loads_a_folder_searches_it_and_is_refused_outside_the_roots(tmp_path: Path) -> None:
    root, outside = _project(tmp_path)
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    with anyio.fail_after(120):
        async with Client(serve("--db", str(tmp_path / "m.db"), "--root", str(root))) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            loaded = await client.call_tool("context_load", {"path": "docs"}, progress_callback=on_progress)
            found = await client.call_tool("context_search", {"query": "staging cluster"})
            refused = await client.call_tool("context_load", {"path": str(outside / "key.txt")})
            through_link = await client.call_tool("context_load", {"path": "link-out/key.txt"})
            forgot = await client.call_tool("context_forget", {"id": loaded.structured_content["loaded"][0]["id"]})
            after = await client.call_tool("context_search", {"query": "staging cluster"})
    assert {"context_load", "context_forget"} <= names
    result = loaded.structured_content
    assert not loaded.is_error and result["loaded_count"] == 2
    assert sorted(o["name"] for o in result["loaded"]) == ["docs/deploy.md", "docs/notes.txt"]
    reasons = {s["path"]: s["reason"] for s in result["skipped"]}
    assert "binary" in reasons["docs/logo.png"] and "docs/escape" in reasons
    assert progress and progress[-1][2] == "loaded"
    [hit] = found.structured_content["result"]
    assert "heron" in hit["text"]  # a hit carries its whole line
    assert refused.is_error and "outside the allowed roots" in refused.content[0].text
    assert through_link.is_error and "symlink" in through_link.content[0].text
    assert not forgot.is_error and forgot.structured_content["name"] == "docs/deploy.md"
    assert after.structured_content["result"] == []


async def test_without_a_root_nothing_is_loaded(store: Store, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("hello\n", encoding="utf-8")
    with anyio.fail_after(60):
        async with Client(serve("--db", str(tmp_path / "m.db"))) as client:
            refused = await client.call_tool("context_load", {"path": str(tmp_path / "a.md")})
    assert refused.is_error and "--root" in refused.content[0].text


async def test_forget_takes_only_documents(store: Store, tmp_path: Path) -> None:
    contexts = ContextStore(store, roots=[tmp_path])
    note = await contexts.add_text("note", "a note", "kept\n")
    tools = LoadingTools(contexts)
    try:
        await tools.context_forget(note.id)
    except Exception as exc:  # noqa: BLE001 - the message is what is checked
        assert "only doc objects" in str(exc)
    else:
        raise AssertionError("a note was forgotten")
    assert (await contexts.get(note.id)).name == "a note"
