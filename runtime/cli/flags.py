"""Flag values the parser cannot judge alone: a count or a budget that must be positive, and the project.

argparse checks that `-k` is an integer; whether 0 or -1 makes sense is the
command's to say. Each command calls `at_least` on its numeric flags before
it opens anything, so a bad value is refused with one line naming the flag
and exit 2 (a `UsageError`), and never reaches the model or the store, where
it would fail later with a message about something else.

Every command that reads or writes a home's memories, documents or runs
takes `--project` (`add_project`); `project_of` gives the project to use.
"""

from __future__ import annotations

import argparse
import math
import os

from loci.memory.errors import UsageError
from loci.memory.projects import ALL, DEFAULT_PROJECT, check_project

__all__ = ["PROJECT_ENV", "add_project", "at_least", "flag_name", "project_of"]

PROJECT_ENV = "LOCI_PROJECT"


def flag_name(name: str) -> str:
    """The flag as typed: `k` is `-k`, `max_tokens` is `--max-tokens`."""
    return "-" + name if len(name) == 1 else "--" + name.replace("_", "-")


def at_least(low: float, **values: float | None) -> None:
    """Refuse each flag whose value is below `low`, or not a number (None means "not given")."""
    for name, value in values.items():
        if value is None:
            continue
        if math.isnan(value) or value < low:
            raise UsageError(f"{flag_name(name)} must be at least {low:g}, not {value:g}")


def add_project(parser: argparse.ArgumentParser, *, every: bool = False) -> None:
    """`--project NAME` (and, for a command that only reads, `--all-projects`)."""
    parser.add_argument(
        "--project", default=None, help=f"the project to use (default: ${PROJECT_ENV}, else {DEFAULT_PROJECT})"
    )
    if every:
        parser.add_argument("--all-projects", action="store_true", help="read every project of the home")


def project_of(args: argparse.Namespace) -> str | None:
    """The project a command works in: `--project`, else `$LOCI_PROJECT`, else `default`; `ALL` for
    `--all-projects` (a write then refuses it)."""
    if getattr(args, "all_projects", False):
        if getattr(args, "project", None):
            raise UsageError("give --project or --all-projects, not both")
        return ALL
    return check_project(getattr(args, "project", None) or os.environ.get(PROJECT_ENV) or DEFAULT_PROJECT)
