"""One definition each: the word splitter, the stemmer, the line ranker, the newer-value rule and the repeat check
live in memory/text/, and the readers that need them call them there.

Read from the source with `ast`, as tests/test_layers.py reads imports. What counts as a definition:

- a word splitter: a regular expression, written as a string where `re` compiles or runs it, that is only
  classes of word characters (`\\w`, or `[^\\W...]`), one of them repeated without bound: `\\w+`,
  `[^\\W_]+`, `[\\w.\\-]+`, `[^\\W\\d_]{3,}`, `[^\\W_][\\w.-]*`;
- a stemmer: an import of a stemming or lemmatizing library, or a function or class named for one
  (`stem`, `lemma`, `...Stemmer`);
- a BM25 (an inverse frequency weighting): a logarithm of a ratio (`log(1 + n / df)`), or a sum of
  inverse per-term counts (`sum(1 / spread[term] ...)`);
- a newer-value rule: "the earlier states a value and the later one it did not", `bool(old) and
  bool(new - old)` (a truth test of a set and of another set less it, in one `and`);
- a repeat check: a loop that stops (`break`, `return`) at an item found `in` a set it `.add`s to.

Each must be found in memory/text/ where it is meant to be (so the check cannot pass by seeing
nothing) and nowhere else but the few places `ELSEWHERE` names, each with why; and the modules that
once held their own copy call memory/text's (`CALLERS`).
"""

from __future__ import annotations

import ast
import re._parser as sre_parse  # the standard library's own reader of regular expressions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bench", "runtime", "servers", "tools", "memory")
TEXT = Path("memory/text")
KINDS = ("splitter", "stemmer", "bm25", "newer", "repeat")
# Where in memory/text/ each is defined: the splitter twice by design (the index's words, which FTS5's
# unicode61 and PostgreSQL's index hold, and identifiers whole and in their parts, which the line ranker
# compares), each of the rest once.
HOME = {
    "splitter": {"memory/text/tokens.py", "memory/text/words.py"},
    "stemmer": {"memory/text/stems.py"},
    "bm25": {"memory/text/lines.py"},
    "newer": {"memory/text/values.py"},
    "repeat": {"memory/text/repeats.py"},
}
# Definitions outside memory/text/ that are meant to be there.
ELSEWHERE = {
    ("bm25", "bench/qa/locomo.py"): "the plain-retrieval arm's textbook Okapi BM25, the baseline Loci is measured by",
    ("splitter", "bench/qa/locomo.py"): "the same baseline's own words",
}
# The modules that held a copy, and the memory/text name each now calls.
CALLERS = {
    "memory/context/fulltext.py": {"query_words", "tokens", "Ranker"},
    "memory/context/index/words.py": {"tokens", "word_tokens"},
    "memory/graph/terms.py": {"query_words"},
    "memory/graph/newer.py": {"tokens", "changes", "numbers"},
    "memory/context/lexical.py": {"Ranker"},
    "runtime/reading/values.py": {"changes", "measures"},
    "runtime/reading/answers.py": {"first_repeat"},
    "runtime/digest/verdict.py": {"first_repeat"},
    "runtime/digest/choice.py": {"Ranker"},
    "runtime/digest/lexical.py": {"Ranker"},
}
_RE_CALLS = {"compile", "findall", "finditer", "search", "match", "fullmatch", "split", "sub", "subn"}
_STEMMING = {"Stemmer", "lemminflect", "nltk", "snowballstemmer", "spacy", "simplemma", "stemming"}
_WORD_CATEGORIES = {sre_parse.CATEGORY_WORD, sre_parse.CATEGORY_NOT_WORD}


def _word_class(item: tuple[object, object]) -> bool:
    """Whether one parsed item is a class of word characters (`\\w`, `[\\w.-]`, `[^\\W_]`)."""
    op, av = item
    if op is sre_parse.IN:
        return any(kind is sre_parse.CATEGORY and value in _WORD_CATEGORIES for kind, value in av)  # type: ignore[attr-defined]
    return op is sre_parse.CATEGORY and av in _WORD_CATEGORIES


def is_splitter(pattern: str) -> bool:
    """Whether `pattern` is only classes of word characters, one of them repeated without bound."""
    try:
        parsed = list(sre_parse.parse(pattern))
    except Exception:
        return False
    unbounded = False
    for op, av in parsed:
        if op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT):
            low, high, inner = av
            if len(inner) != 1 or not _word_class(list(inner)[0]):
                return False
            unbounded |= high is sre_parse.MAXREPEAT
        elif not _word_class((op, av)):
            return False
    return bool(parsed) and unbounded


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _truth(node: ast.expr) -> ast.expr:
    """The expression a truth test tests: `x` of `bool(x)`, else the node itself."""
    if isinstance(node, ast.Call) and _called(node) == "bool" and len(node.args) == 1:
        return node.args[0]
    return node


def _is_newer_rule(node: ast.BoolOp) -> bool:
    if not isinstance(node.op, ast.And):
        return False
    tested = [ast.dump(_truth(value)) for value in node.values]
    return any(
        isinstance(value := _truth(operand), ast.BinOp)
        and isinstance(value.op, ast.Sub)
        and ast.dump(value.right) in tested
        for operand in node.values
    )


def _is_repeat_check(loop: ast.For | ast.While) -> bool:
    added = {
        node.func.value.id
        for node in ast.walk(loop)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "add"
        and isinstance(node.func.value, ast.Name)
    }
    stops = [
        node.test
        for node in ast.walk(loop)
        if isinstance(node, ast.If) and any(isinstance(s, ast.Break | ast.Return) for s in node.body)
    ]
    return any(
        isinstance(test, ast.Compare)
        and any(isinstance(op, ast.In) for op in test.ops)
        and any(isinstance(c, ast.Name) and c.id in added for c in test.comparators)
        for stop in stops
        for test in ast.walk(stop)
    )


def _divides(node: ast.expr, by_count: bool = False) -> bool:
    """Whether `node` holds a division (`by_count`: by a count looked up per term, `spread[term]`)."""
    return any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and (not by_count or isinstance(n.right, ast.Subscript))
        for n in ast.walk(node)
    )


def _call_kind(node: ast.Call) -> str | None:
    called, args = _called(node), node.args
    pattern = args[0].value if args and isinstance(args[0], ast.Constant) else None
    if called in _RE_CALLS and isinstance(pattern, str) and is_splitter(pattern):
        return "splitter"
    if called in ("log", "log2", "log10", "log1p") and any(_divides(a) for a in args):
        return "bm25"
    if called == "sum" and any(_divides(a, by_count=True) for a in args):
        return "bm25"
    return None


def _kind(node: ast.AST) -> str | None:
    """Which of the five `node` defines, if any."""
    if isinstance(node, ast.Call):
        return _call_kind(node)
    if isinstance(node, ast.Import | ast.ImportFrom):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        return "stemmer" if any(name.split(".")[0] in _STEMMING for name in names) else None
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return "stemmer" if node.name.lstrip("_") in ("stem", "lemma") or node.name.endswith("Stemmer") else None
    if isinstance(node, ast.BoolOp):
        return "newer" if _is_newer_rule(node) else None
    if isinstance(node, ast.For | ast.While):
        return "repeat" if _is_repeat_check(node) else None
    return None


def definitions(source: str) -> list[tuple[str, int]]:
    """`(kind, line)` of each definition of the five in a module's source."""
    return [(kind, node.lineno) for node in ast.walk(ast.parse(source)) if (kind := _kind(node))]  # type: ignore[attr-defined]


def project_definitions(root: Path = ROOT) -> dict[str, dict[str, list[int]]]:
    """For each kind, the modules (by path from the repository) that define one, with the lines."""
    found: dict[str, dict[str, list[int]]] = {kind: {} for kind in KINDS}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            for kind, line in definitions(path.read_text(encoding="utf-8")):
                found[kind].setdefault(path.relative_to(root).as_posix(), []).append(line)
    return found


@pytest.fixture(scope="module")
def found() -> dict[str, dict[str, list[int]]]:
    return project_definitions()


@pytest.mark.parametrize("kind", KINDS)
def test_memory_text_holds_the_one_definition(kind: str, found: dict[str, dict[str, list[int]]]) -> None:
    inside = {path for path in found[kind] if path.startswith(f"{TEXT.as_posix()}/")}
    assert inside == HOME[kind]


@pytest.mark.parametrize("kind", KINDS)
def test_no_second_definition_outside_memory_text(kind: str, found: dict[str, dict[str, list[int]]]) -> None:
    outside = {
        path: lines
        for path, lines in found[kind].items()
        if not path.startswith(f"{TEXT.as_posix()}/") and (kind, path) not in ELSEWHERE
    }
    assert outside == {}, f"a second {kind} outside memory/text/: use memory/text's"


def test_every_place_meant_to_hold_one_still_does(found: dict[str, dict[str, list[int]]]) -> None:
    assert {(kind, path) for kind, path in ELSEWHERE if path in found[kind]} == set(ELSEWHERE)


@pytest.mark.parametrize("path", sorted(CALLERS))
def test_the_readers_call_memory_text(path: str) -> None:
    imported: set[str] = set()
    for node in ast.walk(ast.parse((ROOT / path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("loci.memory.text"):
            imported |= {alias.name for alias in node.names}
    assert CALLERS[path] <= imported


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ('import re\nWORD = re.compile(r"[^\\W\\d_]{3,}")\n', "splitter"),
        ('import re\nwords = re.findall(r"\\w+", text)\n', "splitter"),
        ('import re\nQ = re.compile(r"[^\\W_][\\w.-]*")\n', "splitter"),
        ("import math\nw = math.log(1 + lines / spread[t])\n", "bm25"),
        ("s = sum(1 / spread[t] for t in found)\n", "bm25"),
        ("def stem(word):\n    return word.rstrip('s')\n", "stemmer"),
        ("from nltk.stem import PorterStemmer\n", "stemmer"),
        ("def changed(older, newer):\n    return bool(older) and bool(newer - older)\n", "newer"),
        (
            "def cut(parts):\n    seen = set()\n    for p in parts:\n        if p in seen:\n            break\n"
            "        seen.add(p)\n",
            "repeat",
        ),
    ],
)
def test_the_check_sees_each_kind(source: str, kind: str) -> None:
    assert [k for k, _ in definitions(source)] == [kind]


def test_the_check_passes_over_what_is_not_one() -> None:
    source = (
        "import re, math\n"
        'IDENT = re.compile(r"[A-Za-z_][\\w]*")\n'  # an identifier: its first class is not of word characters
        'NUMBER = re.compile(r"\\d+(?:\\.\\d+)*")\n'
        "x = math.log1p(uses)\n"
        "has = bool(set(a) - set(b))\n"  # a difference alone, not the rule
        "for p in parts:\n    if p in seen:\n        continue\n    seen.add(p)\n"  # a dedupe, not a cut
    )
    assert definitions(source) == []
