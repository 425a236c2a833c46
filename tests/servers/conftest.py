"""The home of the token tests: two projects and four tokens, on SQLite (the one engine so far).

Made in a thread of its own (`anyio.run` there), so sync tests (the browser's) and async ones take it alike.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import pytest

from tests.servers.tokens_home import TokenHome, two_projects


@pytest.fixture
def token_home(tmp_path: Path) -> TokenHome:
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, two_projects, tmp_path / "tokens.db").result(timeout=120)
