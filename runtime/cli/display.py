"""Text for a person at a terminal: safe to print, one line, cut to a width, the cut marked.

The CLI shows text that came from outside: memory text anyone may have
written, document lines a run cites. A terminal obeys the control
characters in what it prints (ESC starts a sequence that can clear the
screen, retitle the window or, with OSC 52, set the clipboard), so every
command's human output passes through `safe`, which shows each control
character as an escape (`\\x1b`, `\\x9b`, `\\u202e`) and keeps newlines and
tabs where the text has lines. `--json` output keeps the exact text (JSON
escapes the C0 controls itself). `one_line` is `safe` on a collapsed line.
"""

from __future__ import annotations

import unicodedata

__all__ = ["one_line", "safe"]

# Bidirectional overrides and isolates reorder what a reader sees ("Trojan Source"); show them too.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _shown(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: str, lines: bool = True) -> str:
    """`text` with every control character shown as an escape; `lines` keeps newlines and tabs."""
    kept = "\n\t" if lines else ""
    return "".join(
        _shown(c) if (c not in kept and unicodedata.category(c) in ("Cc", "Zl", "Zp")) or c in _BIDI else c
        for c in text
    )


def one_line(text: str, width: int = 100) -> str:
    """`text` with its whitespace collapsed and its controls escaped, cut to `width` with an ellipsis."""
    flat = safe(" ".join(text.split()), lines=False)
    return flat if len(flat) <= width else flat[: width - 1] + "…"
