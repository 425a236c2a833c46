"""`loci memory restore` and `loci memory history` as a person runs them."""

from __future__ import annotations

from pathlib import Path

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph
from loci.tools.memory import MemoryTools
from tests.runtime.cli_helpers import loci


async def test_restore_then_history_shows_the_earlier_text_and_the_reasons(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    async with await Store.open(db) as store:
        tools = MemoryTools(Graph(store))
        fact = await tools.memory_remember("The staging cluster is called egret")
        await tools.memory_update(fact["id"], "The staging cluster is called heron", reason="renamed in March")
        await tools.memory_forget(fact["id"], reason="staging was shut down")
    restored = loci("memory", "restore", fact["id"], "--reason", "staging is back", "--db", str(db), home=tmp_path)
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.startswith(f"{fact['id']}  restored  The staging cluster is called heron")
    history = loci("memory", "history", fact["id"], "--db", str(db), home=tmp_path)
    assert "was: 'The staging cluster is called egret' until replaced because renamed in March" in history.stdout
    assert (
        "forgotten because staging was shut down" in history.stdout
        and "restored because staging is back" in history.stdout
    )
    again = loci("memory", "restore", fact["id"], "--db", str(db), home=tmp_path)
    assert again.returncode == 2 and "was not forgotten" in again.stderr
