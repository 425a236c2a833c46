"""The shape of a record read from a file, checked before anything is stored from it.

JSON gives a reader whatever the file holds: `"observations": "notalist"`
is a string where a list belongs, and iterating it would store one memory
per letter. The readers take each field through these checks, which return
the value when it has the type the format says and otherwise raise the
reader's one-line error (`BadField`, a `UsageError`, in the form of
`memory/imports/records.py` `bad`) naming the file, the place (`line 12`, `node 3`) and the field, so a wrong type is
refused where it is, never stored as something else.
"""

from __future__ import annotations

from typing import Any, NoReturn

from loci.memory.errors import UsageError

__all__ = ["BadField", "Place", "mapping", "number", "optional_text", "text", "texts"]


class BadField(UsageError):
    """A field of the wrong type or missing: the one line names the file, the place and the field."""


class Place:
    """Where a record is (`source`, `where`), for the error that names a bad field of it."""

    def __init__(self, source: str, where: str) -> None:
        self.source = source
        self.where = where

    def refuse(self, field: str, want: str, value: Any) -> NoReturn:
        self.fail(f'"{field}" must be {want}, not {_kind(value)}')

    def fail(self, why: str) -> NoReturn:
        raise BadField(f"{self.source} {self.where}: {why}")


def text(record: dict[str, Any], field: str, place: Place, *, empty: bool = False) -> str:
    """`record[field]`, which must be a string, and not blank unless `empty`."""
    if field not in record:
        place.fail(f'missing "{field}"')
    value = record[field]
    if not isinstance(value, str) or not (empty or value.strip()):
        place.refuse(field, "a string" if empty else "a non-empty string", value)
    return value


def optional_text(record: dict[str, Any], field: str, place: Place) -> str | None:
    """`record[field]` when present and not null, a string; else None."""
    value = record.get(field)
    if value is not None and not isinstance(value, str):
        place.refuse(field, "a string", value)
    return value


def texts(record: dict[str, Any], field: str, place: Place) -> list[str]:
    """`record[field]`, a list of strings (missing or null: empty)."""
    value = record.get(field)
    if value is None:
        return []
    if not isinstance(value, list):
        place.refuse(field, "a list of strings", value)
    for index, item in enumerate(value, start=1):
        if not isinstance(item, str):
            place.refuse(f"{field}[{index}]", "a string", item)
    return value


def mapping(record: dict[str, Any], field: str, place: Place) -> dict[str, Any]:
    """`record[field]`, an object (missing or null: empty)."""
    value = record.get(field)
    if value is None:
        return {}
    if not isinstance(value, dict):
        place.refuse(field, "an object", value)
    return value


def number(record: dict[str, Any], field: str, place: Place, default: float) -> float:
    """`record[field]`, a number (missing or null: `default`)."""
    value = record.get(field)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        place.refuse(field, "a number", value)
    return float(value)


def _kind(value: Any) -> str:
    names = {str: "a string", bool: "true or false", int: "a number", float: "a number", list: "a list"}
    if value is None:
        return "null"
    return names.get(type(value), "an object" if isinstance(value, dict) else type(value).__name__)
