"""Package members resolved when first used: the `__getattr__` of `memory`, `runtime` and `tools`.

A package lists where each of its public names lives (`{name: module}`) and
sets `__getattr__ = lazy_members(__name__, homes)`: importing the package then
imports none of those modules, and the first use of a name imports its one
module and keeps the value in the package, so the next use is a plain lookup.
This module imports only the standard library, so every package can use it
without paying for another's start.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_members"]


def lazy_members(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports each name from its home in `homes` on first use."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
