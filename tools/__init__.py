"""Tool logic as plain typed async functions over memory/ (no MCP imports).

A tool that cannot honour its arguments raises `ToolError` (or `NotFoundError`
for an id that does not exist), from `memory.errors`, re-exported here.
"""

from memory.errors import NotFoundError, ToolError, UsageError
from tools.context import ContextTools
from tools.history import HistoryTools
from tools.memory import MemoryTools
from tools.memory_compat import CompatTools

__all__ = ["CompatTools", "ContextTools", "HistoryTools", "MemoryTools", "NotFoundError", "ToolError", "UsageError"]
