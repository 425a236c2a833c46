"""Tool logic as plain typed async functions over memory/ (no MCP imports).

A tool that cannot honour its arguments raises an error of `memory.errors`:
the context and recursion tools raise `ToolError`, the memory tools the
store's `UsageError` (a bad query, a bad id), and an id that does not exist is
a `NotFoundError`. Those three classes are re-exported here; the servers turn
any of them into a result the model reads (`servers.errors`).
"""

from memory.errors import NotFoundError, ToolError, UsageError
from tools.context import ContextTools
from tools.history import HistoryTools
from tools.memory import MemoryTools
from tools.memory_compat import CompatTools

__all__ = ["CompatTools", "ContextTools", "HistoryTools", "MemoryTools", "NotFoundError", "ToolError", "UsageError"]
