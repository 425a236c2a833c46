"""Text for a person at a terminal: one line, cut to a width, the cut marked.

The CLI commands show states, facts and answers in lists and status lines;
they all shorten text the same way, here.
"""

from __future__ import annotations

__all__ = ["one_line"]


def one_line(text: str, width: int = 100) -> str:
    """`text` with its whitespace collapsed, cut to `width` characters with an ellipsis when longer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
