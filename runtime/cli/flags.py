"""Flag values the parser cannot judge alone: a count or a budget that must be positive.

argparse checks that `-k` is an integer; whether 0 or -1 makes sense is the
command's to say. Each command calls `at_least` on its numeric flags before
it opens anything, so a bad value is refused with one line naming the flag
and exit 2 (a `UsageError`), and never reaches the model or the store, where
it would fail later with a message about something else.
"""

from __future__ import annotations

import math

from memory.errors import UsageError

__all__ = ["at_least", "flag_name"]


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
