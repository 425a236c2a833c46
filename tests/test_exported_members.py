"""The public surface is what `__all__` says: in every package and every module.

Each module of the five packages has an `__all__` whose names all exist, and
a name one module imports from another is in that other module's `__all__`
(a constant or helper used across modules is public, and says so).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["runtime", "memory", "tools", "servers", "bench"]
PROJECT = [["loci", package] for package in PACKAGES]


def modules() -> list[str]:
    """Every module of the five packages, in their subpackages too (`loci.bench.qa.files`, not only `loci.bench.qa`)."""
    names = [f"loci.{package}" for package in PACKAGES]
    for package in PACKAGES:
        path = [str(ROOT / package)]
        names += [info.name for info in pkgutil.walk_packages(path, prefix=f"loci.{package}.")]
    return sorted(names)


def imported_names(path: Path) -> list[tuple[str, str]]:
    """`(module, name)` for each `from project.module import name` in a source file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[:2] in PROJECT:
            found += [(node.module, alias.name) for alias in node.names]
    return found


@pytest.mark.parametrize("name", modules())
def test_every_module_has_an_all_whose_names_exist(name: str) -> None:
    module = importlib.import_module(name)
    assert isinstance(getattr(module, "__all__", None), list), f"{name} has no __all__ list"
    missing = [member for member in module.__all__ if not hasattr(module, member)]
    assert not missing
    if name.removeprefix("loci.") in PACKAGES:
        assert module.__all__, f"{name} exports nothing"


def test_what_a_module_imports_from_another_is_in_its_all() -> None:
    private = []
    for path in sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py")):
        for source, member in imported_names(path):
            module = importlib.import_module(source)
            if hasattr(module, "__path__") and importlib.util.find_spec(f"{source}.{member}"):
                continue  # a submodule, not a member
            if member not in module.__all__:
                private.append(f"{path.relative_to(ROOT)}: {source}.{member}")
    assert not private
