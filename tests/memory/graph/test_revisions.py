"""Correcting without losing: reasons on update and forget, the earlier texts, and restoring a forgotten node."""

from __future__ import annotations

import pytest

from loci.memory.engines.base import Engine
from loci.memory.errors import UsageError
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall
from loci.tools.memory import MemoryTools


async def test_history_shows_earlier_texts_with_reasons_and_restore_brings_back_the_edges(engine_store: Engine) -> None:
    graph = Graph(engine_store)
    tools = MemoryTools(graph)
    heron = await tools.memory_remember("The staging cluster is called egret")
    deploy = await tools.memory_remember("Deploys to staging need the VPN", links=[heron["id"]])
    await tools.memory_update(heron["id"], "The staging cluster is called heron", reason="renamed in March")
    await tools.memory_forget(heron["id"], reason="staging was shut down")
    assert heron["id"] not in [r.node.ref for r in await Recall(graph).recall("staging cluster heron", record=False)]
    assert await graph.edges(int(deploy["id"][4:])) == []

    restored = await tools.memory_restore(heron["id"], reason="staging is back")
    assert restored == {
        "id": heron["id"],
        "kind": "semantic",
        "text": "The staging cluster is called heron",
        "restored": True,
    }
    assert heron["id"] in [r.node.ref for r in await Recall(graph).recall("staging cluster heron", record=False)]
    [edge] = await graph.edges(int(deploy["id"][4:]))
    assert {edge.src, edge.dst} == {int(heron["id"][4:]), int(deploy["id"][4:])}

    texts = (await Evolution(graph).history(heron["id"]))["texts"]
    assert [(t["op"], t["text"], t["reason"]) for t in texts] == [
        ("update", "The staging cluster is called egret", "renamed in March"),
        ("delete", "The staging cluster is called heron", "staging was shut down"),
        ("restore", None, "staging is back"),
    ]
    assert texts[0]["then"] == "The staging cluster is called heron"


async def test_restore_refuses_a_live_node_and_a_node_whose_text_came_back(engine_store: Engine) -> None:
    tools = MemoryTools(Graph(engine_store))
    fact = await tools.memory_remember("Backups run at 02:00")
    with pytest.raises(UsageError, match="was not forgotten"):
        await tools.memory_restore(fact["id"])
    await tools.memory_forget(fact["id"])
    again = await tools.memory_remember("Backups run at 02:00")
    with pytest.raises(UsageError, match=f"{again['id']} now holds"):
        await tools.memory_restore(fact["id"])


async def test_a_second_forget_and_restore_revive_only_that_forget_s_edges(engine_store: Engine) -> None:
    graph = Graph(engine_store)
    tools = MemoryTools(graph)
    a = await tools.memory_remember("Ana maintains the uploader")
    b = await tools.memory_remember("The uploader runs on Fridays", links=[a["id"]])
    await tools.memory_forget(a["id"])
    await tools.memory_restore(a["id"])
    await tools.memory_forget(b["id"])
    await tools.memory_forget(a["id"])
    await tools.memory_restore(a["id"])
    assert await graph.edges(int(a["id"][4:])) == []
