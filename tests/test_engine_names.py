"""Outside memory/engines/, code asks a home what it can do, never which engine it is.

A caller that needs something only one engine has asks the home for it (`read_bounded`,
`local_file`, `listen`) or asks the dialect to `pick` between per-engine twins
(memory/engines/base.py). Read from the source with `ast`: an engine's name compared
as a string (`engine == "sqlite"`, `in ("postgresql", ...)`, a `case "sqlite":`), a table
looked up by an engine's name (`INDEXES[dialect_of(conn).name]`, `[store.engine]`) and an
`isinstance` test against an engine's store class each fail here.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bench", "runtime", "servers", "tools", "memory")
ENGINES_ROOM = Path("memory", "engines")
ENGINE_NAMES = frozenset({"sqlite", "sqlite3", "postgres", "postgresql", "pg"})
STORE_CLASSES = frozenset({"Store", "PgStore"})


def _names_an_engine(node: ast.expr) -> bool:
    """Whether `node` is an engine's name as a string, or a literal collection holding one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.casefold() in ENGINE_NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_an_engine(item) for item in node.elts)
    return False


def _reads_an_engine_name(node: ast.expr) -> bool:
    """Whether `node` reads which engine a home is: `x.engine`, `dialect_of(x).name`, `x.dialect.name`."""
    if not isinstance(node, ast.Attribute):
        return False
    if node.attr == "engine":
        return True
    if node.attr != "name":
        return False
    owner = node.value
    if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "dialect_of":
        return True
    return isinstance(owner, ast.Attribute) and owner.attr == "dialect"


def _tests_a_store_class(node: ast.Call) -> bool:
    """Whether `node` is `isinstance(x, Store)` or `issubclass` against an engine's store class."""
    if not (isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
        return False
    return any(
        isinstance(part, ast.Name)
        and part.id in STORE_CLASSES
        or isinstance(part, ast.Attribute)
        and part.attr in STORE_CLASSES
        for part in ast.walk(node.args[1])
    )


def _asks(node: ast.AST) -> bool:
    """Whether `node` asks which engine a home is."""
    if isinstance(node, ast.Compare):
        return any(_names_an_engine(side) or _reads_an_engine_name(side) for side in [node.left, *node.comparators])
    if isinstance(node, ast.MatchValue):
        return _names_an_engine(node.value)
    if isinstance(node, ast.Subscript):
        return _reads_an_engine_name(node.slice)
    return isinstance(node, ast.Call) and _tests_a_store_class(node)


def engine_tests(source: str) -> list[int]:
    """The lines of `source` that ask which engine a home is."""
    return sorted(node.lineno for node in ast.walk(ast.parse(source)) if _asks(node))  # type: ignore[attr-defined]


def outside_the_engines(root: Path = ROOT) -> dict[str, list[int]]:
    """Each module outside memory/engines/ that asks which engine a home is, with the lines that do."""
    found: dict[str, list[int]] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            if relative.is_relative_to(ENGINES_ROOM):
                continue
            if lines := engine_tests(path.read_text(encoding="utf-8")):
                found[str(relative)] = lines
    return found


def test_nothing_outside_the_engines_asks_which_engine_a_home_is() -> None:
    assert outside_the_engines() == {}


def test_the_check_sees_each_way_of_asking(tmp_path: Path) -> None:
    asks = [
        'if store.engine != "postgresql":\n    pass\n',
        'on_sqlite = dialect_of(store).name == "sqlite"\n',
        'if kind in ("sqlite", "postgres"):\n    pass\n',
        'match engine:\n    case "SQLite":\n        pass\n',
        "index = INDEXES[dialect_of(conn).name]\n",
        "index = INDEXES[store.engine]\n",
        "same = store.dialect.name == other\n",
        "if isinstance(db, Store):\n    pass\n",
        "if isinstance(db, str | postgres.PgStore):\n    pass\n",
    ]
    for ask in asks:
        assert engine_tests(ask) == [1 + ask.startswith("match")], ask
    (tmp_path / "memory" / "engines").mkdir(parents=True)
    (tmp_path / "memory" / "engines" / "select.py").write_text(asks[0], encoding="utf-8")
    (tmp_path / "memory" / "recall.py").write_text("x = 1\n" + asks[1], encoding="utf-8")
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "report.py").write_text('result = {"engine": "sqlite", "sqlite": 1}\n', encoding="utf-8")
    assert outside_the_engines(tmp_path) == {"memory/recall.py": [2]}
