"""Tool sets by name: `--tools context,memory` checked against the names a server offers.

Kept apart from `servers/app.py` (which imports the MCP SDK), so `loci serve`
checks its command line and answers a client's first questions
(`servers/transports/ready.py`) before the SDK has loaded. `READ_TOOLS` names the tools
a read-only token may call (servers/app.py `build_app(read_only=True)`).
"""

from __future__ import annotations

from collections.abc import Sequence

from loci.memory.errors import UsageError

__all__ = ["READ_TOOLS", "parse_tools"]

# The tools a read-only token may call: they read the home and write nothing to it, but for the use that
# `memory_recall` counts on what it returns, which ranking reads. Any other tool (a new one included) writes.
READ_TOOLS = frozenset(
    {
        "context_list",
        "context_outline",
        "context_read",
        "context_search",
        "memory_recall",
        "memory_get",
        "memory_neighbors",
        "memory_stats",
        "memory_procedures",
    }
)


def parse_tools(spec: str | Sequence[str] | None, known: Sequence[str]) -> tuple[str, ...]:
    """`context,memory` (or a list of names) as a tuple, in the order given; every name checked."""
    names = [n.strip() for n in (spec.split(",") if isinstance(spec, str) else spec or []) if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown tool set {', '.join(unknown)}; choose from {', '.join(known)}")
    return tuple(dict.fromkeys(names or known))
