"""Definitions in source code, found line by line with regular expressions.

This is the outline of code that `ast` cannot read: JavaScript, TypeScript,
Go, Rust, and Python too large or too broken to parse. One pattern per kind
of definition, matched at the start of a line; the level comes from the
indentation (a stack of the indents seen), so a method inside a class is one
level below it. It streams: one line at a time, no file in memory.

Regexes miss what a parser would catch (a definition split over lines, a
string that looks like code); for an outline, a miss costs a read, not a
wrong answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

__all__ = ["PATTERNS", "definitions"]

_JS = [
    ("function", re.compile(r"^(\s*)(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)")),
    ("class", re.compile(r"^(\s*)(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)")),
    ("interface", re.compile(r"^(\s*)(?:export\s+)?(?:interface|type|enum)\s+([A-Za-z_$][\w$]*)")),
    (
        "function",
        re.compile(
            r"^(\s*)(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?"
            r"(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)"
        ),
    ),
    (
        "method",
        re.compile(
            r"^(\s+)(?:(?:public|private|protected|static|async|get|set|readonly|override)\s+)*"
            r"(?!(?:if|for|while|switch|catch|return|function|else|do|with|new|typeof)\b)([A-Za-z_$][\w$]*)\s*\([^;]*\)\s*(?::[^{;]+)?\{\s*$"
        ),
    ),
]

PATTERNS: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    "python": [
        ("class", re.compile(r"^(\s*)class\s+([A-Za-z_]\w*)")),
        ("function", re.compile(r"^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)")),
    ],
    "javascript": _JS,
    "typescript": _JS,
    "go": [
        ("function", re.compile(r"^()func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)")),
        ("type", re.compile(r"^()type\s+([A-Za-z_]\w*)\s+(?:struct|interface)\b")),
    ],
    "rust": [
        (
            "function",
            re.compile(
                r"^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+\"[^\"]*\")\s+)*fn\s+([A-Za-z_]\w*)"
            ),
        ),
        ("type", re.compile(r"^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|union|mod)\s+([A-Za-z_]\w*)")),
        ("impl", re.compile(r"^(\s*)(impl\b[^{]*?)\s*\{?\s*$")),
    ],
}

_PREFIX = {"class": "class", "function": "fn", "method": "fn", "type": "type", "interface": "type"}


def definitions(fmt: str, lines: Iterable[tuple[int, str]]) -> Iterator[tuple[str, str, int, int]]:
    """`(title, kind, level, line)` for each definition in `lines` of language `fmt`."""
    patterns = PATTERNS[fmt]
    indents: list[int] = []
    for number, text in lines:
        for kind, pattern in patterns:
            match = pattern.match(text)
            if not match:
                continue
            indent = len(match.group(1).expandtabs(4))
            while indents and indents[-1] >= indent:
                indents.pop()
            indents.append(indent)
            name = match.group(2).strip()
            title = name if kind == "impl" else f"{_prefix(fmt, kind)} {name}"
            yield title, kind, len(indents), number
            break


def _prefix(fmt: str, kind: str) -> str:
    if fmt == "python":
        return "class" if kind == "class" else "def"
    if fmt == "go" and kind == "function":
        return "func"
    if fmt in ("javascript", "typescript") and kind == "function":
        return "function"
    return _PREFIX[kind]
