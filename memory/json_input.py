"""JSON from outside Loci, parsed with a bound on its depth.

Python's `json` parses nesting until the interpreter's recursion limit and
then raises `RecursionError`, which no `except ValueError` catches, and a
value nested a few hundred levels that does parse can still break whatever
walks it later (serialising it again, validating it). Every JSON a person
or a client hands Loci (an import file, `--meta`, a hook's stdin, a tool's
`meta`) goes through `loads` or `check_depth`: anything nested deeper than
`MAX_DEPTH` is a `TooDeep`, a `ValueError`, so the callers' one-line
messages for bad JSON cover it. The depth is counted without recursion.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_DEPTH", "TooDeep", "check_depth", "loads"]

MAX_DEPTH = 100


class TooDeep(ValueError):
    """JSON nested deeper than `MAX_DEPTH` levels of arrays and objects."""

    def __init__(self, limit: int = MAX_DEPTH) -> None:
        super().__init__(f"it is nested deeper than {limit} levels of arrays and objects")


def check_depth(value: Any, limit: int = MAX_DEPTH) -> Any:
    """`value` itself when its lists and dicts nest at most `limit` deep, else `TooDeep`."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list | tuple) else None
        if children is None:
            continue
        if depth > limit:
            raise TooDeep(limit)
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list | tuple))
    return value


def loads(text: str | bytes, limit: int = MAX_DEPTH) -> Any:
    """`json.loads(text)`, refusing (`TooDeep`) what nests deeper than `limit`; bad JSON is `json.JSONDecodeError`."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(limit) from None
    return check_depth(value, limit)
