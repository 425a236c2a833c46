"""The packages depend one way: runtime -> servers -> tools -> memory, with bench on top.

Read from the source with `ast`, so a back edge fails here even when no test
happens to import the module that makes it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bench", "runtime", "servers", "tools", "memory")
# What each package may import from the project; anything else is a back edge.
ALLOWED = {
    "bench": {"bench", "runtime", "servers", "tools", "memory"},
    "runtime": {"runtime", "servers", "tools", "memory"},
    "servers": {"servers", "tools", "memory"},
    "tools": {"tools", "memory"},
    "memory": {"memory"},
}
# Libraries a lower layer must not reach for: models and MCP stay above memory/, MCP above tools/.
FORBIDDEN = {"memory": {"mcp", "llama_cpp", "httpx", "tiktoken"}, "tools": {"mcp", "llama_cpp", "httpx"}}


def imported(path: Path) -> set[str]:
    """The top-level names a module imports, at any depth (lazy imports included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    wrong = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        names = imported(path)
        back = (names & set(PACKAGES)) - ALLOWED[package]
        foreign = names & FORBIDDEN.get(package, set())
        if back or foreign:
            wrong[str(path.relative_to(ROOT))] = sorted(back | foreign)
    assert not wrong


def test_the_check_sees_a_back_edge(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("def f():\n    from bench import BENCHES\n    import mcp.types\n", encoding="utf-8")
    assert imported(module) == {"bench", "mcp"}
