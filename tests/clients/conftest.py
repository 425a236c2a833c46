"""The machine every client test runs on: a temporary HOME, the stub model, and the clients from .ci/clients.

A missing client fails the test, naming the script that installs it: these
tests are part of the suite, never skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.clients.harness import Machine, missing_clients
from tests.clients.stub_model import StubModel


@pytest.fixture
def stub() -> Iterator[StubModel]:
    with StubModel() as model:
        yield model


@pytest.fixture
def machine(tmp_path: Path, stub: StubModel) -> Machine:
    missing = missing_clients()
    if missing:
        pytest.fail(missing)
    return Machine(tmp_path, stub)
