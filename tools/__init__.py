"""Tool logic as plain typed async functions over memory/ (no MCP imports)."""

__all__: list[str] = []
