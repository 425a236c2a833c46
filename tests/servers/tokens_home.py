"""A home of two projects, `a` and `b`, each with a memory, a document and a run, and tokens.

`two_projects(db)` writes it through the same classes the servers read with
(Graph, ContextStore, Runs, Tokens) and returns what a test needs: each
project's ids and the tokens, by name. `db` is a SQLite file or a PostgreSQL
connection string: the home is the same on both. The `token_home` fixture
(tests/servers/conftest.py) makes it on each engine, `sqlite_token_home` on
SQLite alone. `TokenHome.rows` reads the home back
with the engine's own driver, as a test checks what a server wrote.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

from loci.memory.context.store import ContextStore
from loci.memory.engines.select import use_engine
from loci.memory.evolution.episodes import Episode, Episodes
from loci.memory.graph.graph import Graph
from loci.memory.location import is_postgres
from loci.memory.records.runs import Runs
from loci.memory.records.tokens import Tokens

__all__ = ["TokenHome", "revoke", "two_projects"]

WORDS = {"a": "alpha", "b": "bravo"}


@dataclass
class TokenHome:
    db: str
    memories: dict[str, str] = field(default_factory=dict)  # project -> mem:N
    documents: dict[str, str] = field(default_factory=dict)  # project -> doc:N
    runs: dict[str, int] = field(default_factory=dict)  # project -> run id
    tokens: dict[str, str] = field(default_factory=dict)  # token name -> token

    @property
    def on_postgres(self) -> bool:
        return is_postgres(self.db)

    def secret(self, project: str) -> str:
        return f"the {WORDS[project]} vault code is {WORDS[project]}-4471"

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        """The rows of `sql` (no parameters), read with the engine's own driver."""
        if self.on_postgres:
            import psycopg

            with psycopg.connect(self.db) as conn:
                return [tuple(row) for row in conn.execute(sql.replace("%", "%%")).fetchall()]
        with sqlite3.connect(self.db) as db:
            return db.execute(sql).fetchall()


async def two_projects(db: str) -> TokenHome:
    home = TokenHome(db)
    async with use_engine(db) as store:
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


async def revoke(db: str, name: str) -> None:
    async with use_engine(db) as store:
        await Tokens(store).revoke(name)
