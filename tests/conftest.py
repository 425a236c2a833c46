"""Shared fixtures: anyio on asyncio, and a real SQLite home in tmp_path.

`anyio_mode = "auto"` (pyproject.toml) runs every coroutine test under anyio.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.store import Store


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "loci.db") as opened:
        yield opened

