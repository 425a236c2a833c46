"""The context store's tests run on both engines: `store` is the home of the `home` fixture (tests/conftest.py)."""

from __future__ import annotations

import pytest

from loci.memory.engines.base import Engine


@pytest.fixture
def store(engine_store: Engine) -> Engine:
    """A home on SQLite, then on PostgreSQL, for each test of the context store."""
    return engine_store
