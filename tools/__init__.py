"""Tool logic as plain typed async functions over memory/ (no MCP imports)."""

from tools.context import ContextTools
from tools.history import HistoryTools
from tools.memory import MemoryTools
from tools.memory_compat import CompatTools

__all__ = ["CompatTools", "ContextTools", "HistoryTools", "MemoryTools"]
