"""The packages depend one way: runtime -> servers -> tools -> memory, with bench on top.

Inside `runtime/` and `memory/` the rooms (subpackages, and the package's own
root modules) are layered too, top to bottom in `ROOMS`: a module imports only
its own room and the rooms below it. A package's `__init__.py` is its facade
and may re-export from any room.

No modules import each other in a circle: not through any import, lazy ones
included (`import_circles`, package facades left out), and not through what
importing a module runs (`module_level_circles`, facades included).

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
# the root (errors, params, where a home is) are the floor.
ROOMS = {
    "runtime": ("cli", "digest", "session", "loop", "reading", "", "prompt", "host", "models"),
    "memory": ("hooks", "evolution", "jobs", "imports", "graph", "context", "records", "engines", "text", ""),
}
# Libraries a lower layer must not reach for: models and MCP stay above memory/, MCP above tools/.
FORBIDDEN = {"memory": {"mcp", "llama_cpp", "httpx", "tiktoken"}, "tools": {"mcp", "llama_cpp", "httpx"}}


def imported_modules(path: Path) -> set[str]:
    """The dotted names of the modules a file imports, at any depth (lazy imports included).

    The project's own modules are named without their `loci.` prefix (`loci.memory.engines.sqlite.store` is
    `memory.engines.sqlite.store`), so the packages below are the repository's folders.
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


def import_circles(root: Path = ROOT) -> list[list[str]]:
    """The sets of modules that import each other round in a circle, lazy imports included.

    A package's `__init__.py` (its facade) is left out: it re-exports from every room by design.
    """
    modules = {
        ".".join(path.relative_to(root).with_suffix("").parts): path
        for package in PACKAGES
        for path in (root / package).rglob("*.py")
        if path.name != "__init__.py"
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        named = imported_modules(path)
        named |= {f"{module}.{member}" for module, member in _from_members(path)}
        graph[name] = {other for other in named if other in modules and other != name}
    return _circles(graph)


def _from_members(path: Path) -> set[tuple[str, str]]:
    """`(module, member)` for each `from module import member`, so a submodule imported by name counts."""
    return {
        (node.module.removeprefix("loci."), alias.name)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module and not node.level
        for alias in node.names
    }


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of `graph` with more than one node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = []
                    while True:
                        member = stack.pop()
                        part.append(member)
                        if member == node:
                            break
                    if len(part) > 1:
                        found.append(sorted(part))
            elif step not in index:
                index[step] = low[step] = len(index)
                stack.append(step)
                work.append((step, iter(sorted(graph[step]))))
            elif step in stack:
                low[node] = min(low[node], index[step])
    return found


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert import_circles() == []


def test_the_check_sees_a_circle_through_a_lazy_import(tmp_path: Path) -> None:
    (tmp_path / "runtime" / "models").mkdir(parents=True)
    (tmp_path / "runtime" / "models" / "specs.py").write_text(
        "def load():\n    from loci.runtime.models.openai import OpenAIModel\n", encoding="utf-8"
    )
    (tmp_path / "runtime" / "models" / "openai.py").write_text(
        "from loci.runtime.models.specs import OPENAI_URL\n", encoding="utf-8"
    )
    assert import_circles(tmp_path) == [["runtime.models.openai", "runtime.models.specs"]]


def module_level_circles(root: Path = ROOT) -> list[list[str]]:
    """The sets of modules whose module-level imports run round in a circle, packages' `__init__.py` included
    (a package is named as itself): `from pkg import name` leads to `pkg.name` when that is a module, else to the
    package. What a function imports when called, or a `TYPE_CHECKING` block, is not run on import."""
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {
        name: {other for other in _run_on_import(path, modules) if other != name} for name, path in modules.items()
    }
    return _circles(graph)


def _run_on_import(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project's modules that importing `path` imports (its top-level statements, through `if` and `try`)."""
    found: set[str] = set()
    body = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while body:
        node = body.pop()
        if isinstance(node, ast.Import):
            found.update(alias.name.removeprefix("loci.") for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            module = node.module.removeprefix("loci.")
            members = {f"{module}.{alias.name}" for alias in node.names}
            found.update(members & modules.keys())
            if members - modules.keys():
                found.add(module)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            body += node.body + node.orelse
        elif isinstance(node, ast.Try):
            body += node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
    return found & modules.keys()


def test_no_modules_import_each_other_in_a_circle_when_imported() -> None:
    assert module_level_circles() == []


def test_the_check_sees_a_circle_through_a_package_facade(tmp_path: Path) -> None:
    models = tmp_path / "runtime" / "models"
    models.mkdir(parents=True)
    (models / "__init__.py").write_text("from loci.runtime.models.openai import OpenAIModel\n", encoding="utf-8")
    (models / "openai.py").write_text(
        "from loci.runtime.models import SPECS\nfrom loci.runtime.models.specs import Spec\n", encoding="utf-8"
    )
    (models / "specs.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from loci.runtime.models.openai import OpenAIModel\n"
        "def load():\n    from loci.runtime.models.openai import OpenAIModel\n",
        encoding="utf-8",
    )
    assert module_level_circles(tmp_path) == [["runtime.models", "runtime.models.openai"]]
