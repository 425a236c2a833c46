"""The packages depend one way: runtime -> servers -> tools -> memory, with bench on top.

Inside `runtime/` and `memory/` the rooms (subpackages, and the package's own
root modules) are layered too, top to bottom in `ROOMS`: a module imports only
its own room and the rooms below it. A package's `__init__.py` is its facade
and may re-export from any room.

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
# The rooms of a package, top to bottom ("" is the package's root modules): the CLI drives digest
# and the session, which wires the loop; the loop reads documents through reading/ and uses the
# prompt, which lists the host's tools, which sit above the model backends. In memory/, a coding
# agent's hooks drive the importers and recall; evolution drives the job queue and the graph; the
# importers write conversations into the graph (and tool records into the context store); the graph
# searches with the context store's full-text helpers; the record tables (runs, chats, digest jobs),
# the engines (SQLite's and PostgreSQL's stores and dialects), the words (the one splitter and stemmer) and
# the root (store, errors, params) are the floor.
ROOMS = {
    "runtime": ("cli", "digest", "session", "loop", "reading", "", "prompt", "host", "models"),
    "memory": ("hooks", "evolution", "jobs", "imports", "graph", "context", "records", "engines", "text", ""),
}
# Libraries a lower layer must not reach for: models and MCP stay above memory/, MCP above tools/.
FORBIDDEN = {"memory": {"mcp", "llama_cpp", "httpx", "tiktoken"}, "tools": {"mcp", "llama_cpp", "httpx"}}


def imported_modules(path: Path) -> set[str]:
    """The dotted names of the modules a file imports, at any depth (lazy imports included).

    The project's own modules are named without their `loci.` prefix (`loci.memory.store` is
    `memory.store`), so the packages below are the repository's folders.
    """
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return {name.removeprefix("loci.") for name in names}


def imported(path: Path) -> set[str]:
    """The top-level names a module imports."""
    return {name.split(".")[0] for name in imported_modules(path)}


def room(module: str, root: Path = ROOT) -> str:
    """The room of a dotted module name: its subpackage under the top-level package, or "" for a root module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (root / parts[0] / parts[1]).is_dir()) else ""


def back_edges(package: str, root: Path = ROOT) -> dict[str, list[str]]:
    """Each module of `package` that imports from a room above its own, with what it imports."""
    order = ROOMS[package]
    wrong: dict[str, list[str]] = {}
    for path in sorted((root / package).rglob("*.py")):
        relative = path.relative_to(root)
        if relative == Path(package, "__init__.py"):
            continue  # the facade re-exports from every room
        own = room(".".join(relative.with_suffix("").parts), root)
        above = [
            name
            for name in imported_modules(path)
            if name.split(".")[0] == package and order.index(room(name, root)) < order.index(own)
        ]
        if above:
            wrong[str(relative)] = sorted(above)
    return wrong


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
    module.write_text("def f():\n    from loci.bench import BENCHES\n    import mcp.types\n", encoding="utf-8")
    assert imported(module) == {"bench", "mcp"}


@pytest.mark.parametrize("package", sorted(ROOMS))
def test_a_room_imports_only_its_own_and_the_rooms_below(package: str) -> None:
    assert {name for name in ROOMS[package] if name} == {
        path.name for path in (ROOT / package).iterdir() if (path / "__init__.py").exists()
    }, "every subpackage has its place in ROOMS"
    assert back_edges(package) == {}


def test_the_check_sees_a_back_edge_between_rooms(tmp_path: Path) -> None:
    for name in ("prompt", "host", "models", "cli", "digest"):
        (tmp_path / "runtime" / name).mkdir(parents=True)
        (tmp_path / "runtime" / name / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "runtime" / "run.py").write_text(
        "from loci.runtime.prompt.build import RegionSizes\n", encoding="utf-8"
    )
    (tmp_path / "runtime" / "prompt" / "notes.py").write_text(
        "from loci.runtime.loop.records import NoteMode\nfrom loci.runtime.models.base import Model\n", encoding="utf-8"
    )
    (tmp_path / "runtime" / "models" / "base.py").write_text(
        "def f():\n    from loci.runtime.cli.main import main\n", encoding="utf-8"
    )
    assert back_edges("runtime", tmp_path) == {
        "runtime/models/base.py": ["runtime.cli.main"],
        "runtime/prompt/notes.py": ["runtime.loop.records"],
    }
