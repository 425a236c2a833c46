"""Tool logic as plain typed async functions over memory/ (no MCP imports).

A tool that cannot honour its arguments raises an error of `memory.errors`:
the context and recursion tools raise `ToolError`, the memory tools the
store's `UsageError` (a bad query, a bad id), and an id that does not exist is
a `NotFoundError`. Those three classes are re-exported here; the servers turn
any of them into a result the model reads (`servers.errors`). The names are
resolved when first used (a module `__getattr__`, memory/lazy.py), so the CLI's memory
commands import `tools.memory` without the context tools.
"""

from __future__ import annotations

from loci.memory.lazy import lazy_members

__all__ = ["CompatTools", "ContextTools", "HistoryTools", "MemoryTools", "NotFoundError", "ToolError", "UsageError"]

_HOMES: dict[str, str] = {
    "CompatTools": "loci.tools.memory_compat",
    "ContextTools": "loci.tools.context",
    "HistoryTools": "loci.tools.history",
    "MemoryTools": "loci.tools.memory",
    "NotFoundError": "loci.memory.errors",
    "ToolError": "loci.memory.errors",
    "UsageError": "loci.memory.errors",
}


__getattr__ = lazy_members(__name__, _HOMES)
