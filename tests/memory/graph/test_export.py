"""Export: the live graph as JSON or GraphML that other tools read."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import pytest

from loci.memory.engines.base import Engine
from loci.memory.errors import UsageError
from loci.memory.graph.export import export_graph
from loci.memory.graph.graph import Graph


async def _small_graph(engine_store: Engine) -> None:
    graph = Graph(engine_store)
    a, _ = await graph.remember("fact <with> & markup \x01")
    b, _ = await graph.remember("an episode", kind="episodic", links=[a.id])
    gone, _ = await graph.remember("forgotten", links=[b.id])
    await graph.forget(gone.id)


async def test_json_export_has_live_nodes_and_edges(engine_store: Engine) -> None:
    await _small_graph(engine_store)
    out = io.StringIO()
    counts = await export_graph(engine_store, out, "json")
    data = json.loads(out.getvalue())
    assert counts == {"nodes": 2, "edges": 1, "unreadable": 0}
    assert [n["id"] for n in data["nodes"]] == ["mem:1", "mem:2"]
    assert data["edges"][0] | {"src": "mem:2", "dst": "mem:1", "kind": "ground"} == data["edges"][0]


async def test_graphml_export_parses_as_xml(engine_store: Engine) -> None:
    await _small_graph(engine_store)
    out = io.StringIO()
    await export_graph(engine_store, out, "graphml")
    root = ET.fromstring(out.getvalue())
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert len(root.findall(".//g:node", ns)) == 2
    [edge] = root.findall(".//g:edge", ns)
    assert (edge.get("source"), edge.get("target")) == ("mem:2", "mem:1")
    texts = [d.text for d in root.findall(".//g:data[@key='n_text']", ns)]
    assert texts[0] == "fact <with> & markup "


async def test_unknown_format_is_a_usage_error(engine_store: Engine) -> None:
    with pytest.raises(UsageError, match="graphml"):
        await export_graph(engine_store, io.StringIO(), "csv")
