"""Outlines: the table of contents of a context object, each entry with its lines.

The outline is how the model decides where to read without reading. It is
built on demand from the stored lines, by the object's format:

- Markdown: ATX (`# Title`) and setext (underlined) headings, outside fenced
  code; a heading's range runs to the next heading of the same or a higher
  level.
- Python: `ast` gives classes and functions, nested, with exact ranges. A
  file too large to parse comfortably, or one that does not parse, falls
  back to the regular expressions used for other languages.
- JavaScript/TypeScript (functions, classes, arrow functions bound to a
  name, methods), Go (func, type), Rust (fn, struct, enum, trait, impl, mod):
  one regex per line; nesting comes from indentation, and a definition runs
  to the line before the next definition at the same or a lower indentation.
- JSON: keys at the first two levels of indentation. JSONL: pages of records.
- Text (and anything else): paragraphs, or pages when there are too many
  paragraphs to list (and form feeds always start a page).

An outline is capped at `limit` entries: deeper levels are dropped first,
and what is still too long is cut and marked `truncated`.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from loci.memory.context.outline_code import definitions

__all__ = ["AST_MAX_CHARS", "Entry", "Outline", "build_outline"]

AST_MAX_CHARS = 4_000_000
TITLE_CHARS = 80

_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_JSON_KEY = re.compile(r'^(\s{0,4})"((?:[^"\\]|\\.)*)"\s*:')


@dataclass(frozen=True)
class Entry:
    title: str
    kind: str
    level: int
    start: int
    end: int


@dataclass(frozen=True)
class Outline:
    format: str
    entries: list[Entry]
    truncated: bool = False


def build_outline(fmt: str, lines: Iterable[tuple[int, str]], total_lines: int, limit: int = 200) -> Outline:
    """The outline of an object of format `fmt` from its `(number, text)` lines."""
    if fmt == "python":
        entries = _python(lines, total_lines)
    elif fmt == "markdown":
        entries = _close(_markdown(lines), total_lines)
    elif fmt in ("javascript", "typescript", "go", "rust"):
        entries = _close(definitions(fmt, lines), total_lines)
    elif fmt == "json":
        entries = _close(_json(lines), total_lines)
    elif fmt == "jsonl":
        entries = _pages(((n, t) for n, t in lines if t.strip()), total_lines, limit, kind="record")
    else:
        entries = _text(lines, total_lines, limit)
    return _fit(fmt, entries, limit)


def _title(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


def _close(opened: Iterable[tuple[str, str, int, int]], total_lines: int) -> list[Entry]:
    """Give each `(title, kind, level, start)` the end before the next entry at its level or above."""
    items = list(opened)
    entries = []
    for index, (title, kind, level, start) in enumerate(items):
        end = total_lines
        for _, _, other_level, other_start in items[index + 1 :]:
            if other_level <= level:
                end = other_start - 1
                break
        entries.append(Entry(_title(title), kind, level, start, max(start, end)))
    return entries


def _markdown(lines: Iterable[tuple[int, str]]) -> Iterable[tuple[str, str, int, int]]:
    fenced = False
    previous: tuple[int, str] | None = None
    for number, text in lines:
        if _FENCE.match(text):
            fenced, previous = not fenced, None
            continue
        if fenced:
            continue
        if match := _ATX.match(text):
            yield match.group(2), "heading", len(match.group(1)), number
            previous = None
            continue
        setext = _SETEXT.match(text)
        if (
            setext
            and previous is not None
            and previous[1].strip()
            and not previous[1].lstrip().startswith(("-", "*", ">"))
        ):
            yield previous[1].strip(), "heading", 1 if setext.group(1)[0] == "=" else 2, previous[0]
            previous = None
            continue
        previous = (number, text)


def _python(lines: Iterable[tuple[int, str]], total_lines: int) -> list[Entry]:
    rest = iter(lines)
    kept: list[tuple[int, str]] = []
    size = 0
    for number, text in rest:
        kept.append((number, text))
        size += len(text)
        if size > AST_MAX_CHARS:
            return _close(definitions("python", itertools.chain(kept, rest)), total_lines)
    try:
        tree = ast.parse("".join(text for _, text in kept))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _close(definitions("python", kept), total_lines)
    return list(_python_nodes(tree.body, 1))


def _python_nodes(body: list[ast.stmt], level: int) -> Iterable[Entry]:
    for node in body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            prefix = {"ClassDef": "class", "FunctionDef": "def", "AsyncFunctionDef": "async def"}[type(node).__name__]
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            yield Entry(f"{prefix} {node.name}", kind, level, start, node.end_lineno or node.lineno)
            yield from _python_nodes(node.body, level + 1)


def _json(lines: Iterable[tuple[int, str]]) -> Iterable[tuple[str, str, int, int]]:
    indents: list[int] = []
    for number, text in lines:
        if match := _JSON_KEY.match(text):
            indent = len(match.group(1))
            if not indents or indent > indents[-1]:
                if len(indents) >= 2:
                    continue
                indents.append(indent)
            while indents and indent < indents[-1]:
                indents.pop()
            if indent == indents[-1]:
                yield match.group(2), "key", len(indents), number


def _text(lines: Iterable[tuple[int, str]], total_lines: int, limit: int) -> list[Entry]:
    paragraphs: list[tuple[int, str]] = []
    inside = False
    for number, text in lines:
        if "\f" in text:
            inside, text = False, text.replace("\f", "")
        if not text.strip():
            inside = False
        elif not inside:
            inside = True
            paragraphs.append((number, text))
    return _pages(paragraphs, total_lines, limit, kind="paragraph")


def _pages(starts: Iterable[tuple[int, str]], total_lines: int, limit: int, kind: str) -> list[Entry]:
    """One entry per start, or per page of `total_lines / limit` lines when there are too many."""
    page_lines = max(1, -(-total_lines // limit))
    firsts: list[tuple[int, str]] = []
    count = 0
    for number, text in starts:
        count += 1
        if count <= limit:
            firsts.append((number, text))
        elif count == limit + 1:
            firsts = _by_page(firsts, page_lines)
        if count > limit and (not firsts or (number - 1) // page_lines > (firsts[-1][0] - 1) // page_lines):
            firsts.append((number, text))
    paged = count > limit
    entries = []
    for index, (number, text) in enumerate(firsts):
        end = firsts[index + 1][0] - 1 if index + 1 < len(firsts) else total_lines
        entries.append(Entry(_title(text), "page" if paged else kind, 1, number, max(number, end)))
    return entries


def _by_page(firsts: list[tuple[int, str]], page_lines: int) -> list[tuple[int, str]]:
    kept: list[tuple[int, str]] = []
    for number, text in firsts:
        if not kept or (number - 1) // page_lines > (kept[-1][0] - 1) // page_lines:
            kept.append((number, text))
    return kept


def _fit(fmt: str, entries: list[Entry], limit: int) -> Outline:
    levels = sorted({e.level for e in entries})
    while len(entries) > limit and len(levels) > 1:
        levels.pop()
        entries = [e for e in entries if e.level <= levels[-1]]
    if len(entries) > limit:
        return Outline(fmt, entries[:limit], True)
    return Outline(fmt, entries)
