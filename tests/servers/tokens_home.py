"""A home of two projects, `a` and `b`, each with a memory, a document and a run (with its episode), and tokens.

`two_projects(db)` writes it through the same classes the servers read with
(Graph, ContextStore, Runs, Tokens) and returns what a test needs: each
project's ids and the tokens, by name. The `token_home` fixture
(tests/servers/conftest.py) is the one place that says which engine holds
the home, so the tests of tokens can later run over a second one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memory.context.store import ContextStore
from memory.evolution.episodes import Episode, Episodes
from memory.graph.graph import Graph
from memory.records.runs import Runs
from memory.records.tokens import Tokens
from memory.store import Store

__all__ = ["TokenHome", "two_projects"]

WORDS = {"a": "alpha", "b": "bravo"}


@dataclass
class TokenHome:
    db: Path
    memories: dict[str, str] = field(default_factory=dict)  # project -> mem:N
    documents: dict[str, str] = field(default_factory=dict)  # project -> doc:N
    runs: dict[str, int] = field(default_factory=dict)  # project -> run id
    tokens: dict[str, str] = field(default_factory=dict)  # token name -> token

    def secret(self, project: str) -> str:
        return f"the {WORDS[project]} vault code is {WORDS[project]}-4471"


async def two_projects(db: Path) -> TokenHome:
    home = TokenHome(db)
    async with await Store.open(db) as store:
        for project in ("a", "b"):
            node, _ = await Graph(store, project=project).remember(home.secret(project))
            home.memories[project] = node.ref
            doc = await ContextStore(store, project=project).add_text("doc", f"{project}.txt", home.secret(project))
            home.documents[project] = doc.id
            runs = Runs(store, project=project)
            run = await runs.start(f"find the {WORDS[project]} vault code")
            await runs.finish(run, status="done", answer=home.secret(project))
            await Episodes(Graph(store, project=project)).write(Episode(f"find the {WORDS[project]} code", run_id=run))
            home.runs[project] = run
        tokens = Tokens(store)
        home.tokens["alice"] = await tokens.add("alice", ["a"])
        home.tokens["bob"] = await tokens.add("bob", ["b"])
        home.tokens["both"] = await tokens.add("both", ["a", "b"])
        home.tokens["reader"] = await tokens.add("reader", ["a"], read_only=True)
    return home
