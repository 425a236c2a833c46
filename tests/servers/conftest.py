"""The home of the token tests: two projects and four tokens, on each engine (`token_home`) or on SQLite.

`token_home` runs a test on a SQLite file and on a new PostgreSQL database
(the session's cluster, tests/conftest.py); `sqlite_token_home` is for the
compatible server's test, whose home is kept in SQLite so far. Made in
a thread of its own (`anyio.run` there), so sync tests (the browser's) and
async ones take it alike.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import pytest

from tests.servers.tokens_home import TokenHome, two_projects


def _made(db: str) -> TokenHome:
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, two_projects, db).result(timeout=120)


@pytest.fixture(params=["sqlite", "postgresql"])
def token_home(request: pytest.FixtureRequest, tmp_path: Path) -> TokenHome:
    if request.param == "sqlite":
        return _made(str(tmp_path / "tokens.db"))
    return _made(request.getfixturevalue("postgres_url"))


@pytest.fixture
def sqlite_token_home(tmp_path: Path) -> TokenHome:
    return _made(str(tmp_path / "tokens.db"))
