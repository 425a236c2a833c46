"""Shared fixtures: anyio on asyncio, a real SQLite home in tmp_path, scripts used in full.

`postgres_server` starts one real PostgreSQL cluster for the session, only
when a test asks for it (bench/servers/postgres_cluster.py); `postgres_url` is a new
database on it for one test; `home` runs a test on each engine, and
`engine_store` is the home opened there.

`anyio_mode = "auto"` (pyproject.toml) runs every coroutine test under anyio.
`LOCI_HOME` points at a fresh directory for the whole session, so that no
test reads or writes the user's home (the llama.cpp verdict is cached there).
Every `ScriptedModel` a test makes must have used all its steps when the test
ends (`every_scripted_step_used`, on for every test): a loop that stops early
fails the test instead of passing unnoticed. Script exactly what runs.

The suite runs on two pytest-xdist workers, a file to a worker (pyproject's
addopts); "the session" is a worker's, so each worker has its own `LOCI_HOME`
and, if its tests ask for one, its own PostgreSQL cluster.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from loci.bench.servers.postgres_cluster import cluster
from loci.memory.engines.base import Engine
from loci.memory.engines.select import use_engine
from loci.memory.engines.sqlite.store import Store
from loci.runtime.models.scripted import ScriptedModel


@pytest.fixture(scope="session", autouse=True)
def loci_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("loci-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOCI_HOME", str(home))
        yield home


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "loci.db") as opened:
        yield opened


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """One PostgreSQL cluster for the session (bench/servers/postgres_cluster.py): its `postgres` database's URL."""
    with cluster() as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A new, empty database on the session's cluster, for one test."""
    return new_database(postgres_server)


def new_database(server: str) -> str:
    """The URL of a new, empty database on the cluster whose `postgres` database is at `server`."""
    import psycopg

    name = f"loci_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(params=["sqlite", "postgresql"])
def home(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a home is, on each engine: a SQLite file in tmp_path, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "loci.db")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
async def engine_store(home: str) -> AsyncIterator[Engine]:
    """A home opened on each engine (the `home` fixture's), closed after the test."""
    async with use_engine(home) as opened:
        yield opened


@pytest.fixture(autouse=True)
def every_scripted_step_used(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ScriptedModel]]:
    """The scripted models made during the test; each must have used every step by its end."""
    made: list[ScriptedModel] = []
    init = ScriptedModel.__init__

    def recording(self: ScriptedModel, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(ScriptedModel, "__init__", recording)
    yield made
    for model in made:
        model.check_used()
