"""Shared fixtures: anyio on asyncio, and a real SQLite home in tmp_path.

`anyio_mode = "auto"` (pyproject.toml) runs every coroutine test under anyio.
`LOCI_HOME` points at a fresh directory for the whole session, so that no
test reads or writes the user's home (the llama.cpp verdict is cached there).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from memory.store import Store


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

