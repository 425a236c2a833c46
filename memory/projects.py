"""Projects: one home, memories kept apart.

Every memory node, context object, run and job belongs to one project,
named by a short word (`default` unless one is given). The tables carry it
in a `project` column, and a home made before projects existed has every
row in `default` (each table's migration sets that as the column's
default). Readers are built for one project and see only its rows; `ALL`
(None) asks for every project at once, which reading may do and writing
may not.
"""

from __future__ import annotations

import re

from loci.memory.errors import UsageError

__all__ = ["ALL", "DEFAULT_PROJECT", "MAX_PROJECT_CHARS", "check_project", "in_project", "writable_project"]

DEFAULT_PROJECT = "default"
ALL: None = None
MAX_PROJECT_CHARS = 64
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def check_project(name: object) -> str:
    """The project name itself, or a clear `UsageError` for one that is empty, too long or not a word."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise UsageError(
            f"{name!r} is not a project name; a project is named by letters, digits, '.', '_' and '-'"
            " (starting with a letter or a digit), such as 'default' or 'my-app'"
        )
    if len(name) > MAX_PROJECT_CHARS:
        raise UsageError(f"the project name has {len(name)} characters, over the limit of {MAX_PROJECT_CHARS}")
    return name


def writable_project(project: str | None) -> str:
    """The project a write goes to: writing into every project at once is refused."""
    if project is ALL:
        raise UsageError("name one project to write to; every project at once is for reading only")
    return project


def in_project(project: str | None, column: str = "project") -> tuple[str, list[str]]:
    """The SQL that keeps a read to `project`, ` AND column = ?`, and its parameter; nothing at all for ALL."""
    if project is ALL:
        return "", []
    return f" AND {column} = ?", [project]
