"""Each package's public surface is what its `__all__` says, and every name in it exists."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("package", ["runtime", "memory", "tools", "servers", "bench"])
def test_all_names_exist(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__, f"{package} exports nothing"
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing
