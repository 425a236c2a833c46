"""The home of the token tests: two projects and four tokens, on SQLite (the one engine so far)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.servers.tokens_home import TokenHome, two_projects


@pytest.fixture
async def token_home(tmp_path: Path) -> TokenHome:
    return await two_projects(tmp_path / "tokens.db")
