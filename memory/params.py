"""SQLite's limit on bound parameters, and the one way Loci stays under it.

A query over many ids (`WHERE id IN (?, ?, ...)`) binds one parameter per
id, and SQLite refuses more than `SQLITE_MAX_VARIABLE_NUMBER` of them: 999
in builds before 3.32, which some systems still ship. `in_chunks` splits the
ids into runs of `CHUNK` (400: a query may bind its run twice, as the edge
lookups do for both ends, and stay under 999) and gives each run with its
placeholders, so the caller runs one query per run.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

__all__ = ["CHUNK", "in_chunks"]

CHUNK = 400

T = TypeVar("T")


def in_chunks(values: Sequence[T], size: int = CHUNK) -> Iterator[tuple[list[T], str]]:
    """`(run, "?,?,...")` for consecutive runs of at most `size` values."""
    for start in range(0, len(values), size):
        run = list(values[start : start + size])
        yield run, ",".join("?" * len(run))
