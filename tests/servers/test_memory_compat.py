"""The drop-in for the reference MCP memory server: its documented examples, replayed over stdio.

The script below follows the reference README: the entity, relation and
observation examples, then each tool's documented behaviour (existing names
ignored, duplicate relations skipped, added observations returned, a missing
entity an error, deletions silent). It runs against `python -m
loci.servers.memory_compat` over stdio; when `npx` is on the machine, the slow
test runs the same script against the reference server itself and compares
every answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from loci.memory.engines.sqlite.store import Store
from loci.memory.location import NOT_ON_POSTGRES
from loci.servers.memory_compat import build_compat_server

REPO = Path(__file__).resolve().parents[2]
JOHN = {"name": "John_Smith", "entityType": "person", "observations": ["Speaks fluent Spanish"]}
ANTHROPIC = {"name": "Anthropic", "entityType": "organization", "observations": ["AI safety company"]}
WORKS_AT = {"from": "John_Smith", "to": "Anthropic", "relationType": "works_at"}
MORE = ["Speaks fluent Spanish", "Graduated in 2019", "Prefers morning meetings"]

# (tool, arguments, expected structured result; None: an error is expected)
SCRIPT: list[tuple[str, dict[str, Any], Any]] = [
    ("create_entities", {"entities": [JOHN, ANTHROPIC]}, {"entities": [JOHN, ANTHROPIC]}),
    ("create_entities", {"entities": [JOHN]}, {"entities": []}),
    ("create_relations", {"relations": [WORKS_AT]}, {"relations": [WORKS_AT]}),
    ("create_relations", {"relations": [WORKS_AT]}, {"relations": []}),
    (
        "add_observations",
        {"observations": [{"entityName": "John_Smith", "contents": MORE}]},
        {"results": [{"entityName": "John_Smith", "addedObservations": MORE[1:]}]},
    ),
    ("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}, None),
    (
        "search_nodes",
        {"query": "spanish"},
        {"entities": [{**JOHN, "observations": MORE}], "relations": [WORKS_AT]},
    ),
    ("search_nodes", {"query": "ORGANIZATION"}, {"entities": [ANTHROPIC], "relations": [WORKS_AT]}),
    ("search_nodes", {"query": "nothing like this"}, {"entities": [], "relations": []}),
    (
        "open_nodes",
        {"names": ["Anthropic", "Ghost"]},
        {"entities": [ANTHROPIC], "relations": [WORKS_AT]},
    ),
    (
        "delete_observations",
        {"deletions": [{"entityName": "John_Smith", "observations": ["Prefers morning meetings", "never said"]}]},
        {"success": True, "message": "Observations deleted successfully"},
    ),
    (
        "delete_relations",
        {"relations": [WORKS_AT, {"from": "A", "to": "B", "relationType": "c"}]},
        {"success": True, "message": "Relations deleted successfully"},
    ),
    (
        "read_graph",
        {},
        {"entities": [{**JOHN, "observations": MORE[:2]}, ANTHROPIC], "relations": []},
    ),
    (
        "delete_entities",
        {"entityNames": ["John_Smith", "Ghost"]},
        {"success": True, "message": "Entities deleted successfully"},
    ),
    ("read_graph", {}, {"entities": [ANTHROPIC], "relations": []}),
]


async def replay(client: Client) -> list[Any]:
    answers = []
    for tool, arguments, _ in SCRIPT:
        result = await client.call_tool(tool, arguments)
        answers.append(None if result.is_error else result.structured_content)
    return answers


def loci_stdio(db: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "loci.servers.memory_compat", "--db", str(db)], cwd=str(REPO)
    )


async def test_the_documented_examples_replay_over_stdio(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with Client(loci_stdio(tmp_path / "loci.db")) as client:
            answers = await replay(client)
    for (tool, arguments, expected), answer in zip(SCRIPT, answers, strict=True):
        assert answer == expected, (tool, arguments)


async def test_the_tool_list_matches_the_reference(store: Store) -> None:
    async with Client(build_compat_server(store)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert list(tools) == [
        "create_entities",
        "create_relations",
        "add_observations",
        "delete_entities",
        "delete_observations",
        "delete_relations",
        "read_graph",
        "search_nodes",
        "open_nodes",
    ]
    relation = tools["create_relations"].input_schema["$defs"]["Relation"]
    assert relation["required"] == ["from", "to", "relationType"]
    assert tools["search_nodes"].input_schema["required"] == ["query"]
    assert tools["read_graph"].annotations.read_only_hint is True
    assert tools["delete_entities"].annotations.destructive_hint is True
    assert tools["open_nodes"].output_schema["required"] == ["entities", "relations"]


async def test_search_nodes_ranks_the_exact_name_first(store: Store) -> None:
    async with Client(build_compat_server(store)) as client:
        people = [
            {"name": "Ada", "entityType": "person", "observations": ["friend of Ada_Lovelace"]},
            {"name": "Ada_Lovelace", "entityType": "person", "observations": ["wrote the first program"]},
            {"name": "Babbage", "entityType": "person", "observations": ["worked with Ada_Lovelace"]},
        ]
        await client.call_tool("create_entities", {"entities": people})
        found = await client.call_tool("search_nodes", {"query": "ada_lovelace"})
    names = [e["name"] for e in found.structured_content["entities"]]
    assert names[0] == "Ada_Lovelace" and set(names) == {"Ada", "Ada_Lovelace", "Babbage"}


async def test_search_nodes_ranks_entities_found_by_observation_by_how_well_it_matches(store: Store) -> None:
    async with Client(build_compat_server(store)) as client:
        people = [  # the weaker match is created first, so a tie would put it first
            {"name": "Bo", "entityType": "person", "observations": ["once saw a kestrel over the long valley road"]},
            {"name": "Cy", "entityType": "person", "observations": ["kestrel kestrel kestrel"]},
            {"name": "kestrel", "entityType": "bird", "observations": []},
        ]
        await client.call_tool("create_entities", {"entities": people})
        found = await client.call_tool("search_nodes", {"query": "kestrel"})
    assert [e["name"] for e in found.structured_content["entities"]] == ["kestrel", "Cy", "Bo"]


async def test_relations_may_name_entities_created_later(store: Store) -> None:
    async with Client(build_compat_server(store)) as client:
        await client.call_tool("create_relations", {"relations": [{"from": "X", "to": "Y", "relationType": "knows"}]})
        graph = (await client.call_tool("read_graph", {})).structured_content
        assert graph == {"entities": [], "relations": [{"from": "X", "to": "Y", "relationType": "knows"}]}
        made = await client.call_tool(
            "create_entities", {"entities": [{"name": "X", "entityType": "t", "observations": []}]}
        )
        assert made.structured_content["entities"][0]["name"] == "X"
        opened = (await client.call_tool("open_nodes", {"names": ["X"]})).structured_content
    assert opened["relations"] == [{"from": "X", "to": "Y", "relationType": "knows"}]


async def test_compat_entities_are_memories_the_memory_tools_recall(store: Store) -> None:
    from loci.memory.graph.graph import Graph
    from loci.memory.graph.recall import Recall

    async with Client(build_compat_server(store)) as client:
        await client.call_tool("create_entities", {"entities": [JOHN]})
    [hit, *_] = await Recall(Graph(store)).recall("fluent Spanish speaker")
    assert hit.node.text == "Speaks fluent Spanish"


@pytest.mark.slow
async def test_the_reference_server_gives_the_same_answers(tmp_path: Path) -> None:
    reference = StdioServerParameters(
        command="npx",
        args=["-y", "@modelcontextprotocol/server-memory"],
        env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl"), "PATH": os.environ["PATH"]},
    )
    with anyio.fail_after(180):
        async with Client(reference) as client:
            theirs = await replay(client)
        async with Client(loci_stdio(tmp_path / "loci.db")) as client:
            ours = await replay(client)
    assert ours == theirs


async def test_without_db_the_server_takes_loci_db_as_every_command_does(tmp_path: Path) -> None:
    chosen, given = tmp_path / "chosen.db", tmp_path / "given.db"
    env = {**os.environ, "LOCI_DB": str(chosen), "LOCI_HOME": str(tmp_path / "home")}
    for args, home in (
        (["-m", "loci.servers.memory_compat"], chosen),
        (["-m", "loci.servers.memory_compat", "--db", str(given)], given),
    ):
        server = StdioServerParameters(command=sys.executable, args=args, cwd=str(REPO), env=env)
        with anyio.fail_after(60):
            async with Client(server) as client:
                await client.call_tool("create_entities", {"entities": [JOHN]})
        async with await Store.open(home) as store:
            assert await store.read(
                lambda db: db.conn.execute("SELECT name FROM memory_nodes WHERE name IS NOT NULL").fetchall()
            ) == [("John_Smith",)]
    assert not (tmp_path / "home").exists()


def test_a_connection_string_in_loci_db_is_refused_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "LOCI_DB": "postgresql://loci@127.0.0.1:1/loci", "LOCI_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "loci.servers.memory_compat"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=str(REPO),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stderr == f"loci: {NOT_ON_POSTGRES}\n"
    assert list(tmp_path.iterdir()) == []
