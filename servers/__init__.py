"""MCP wiring: MCPServer instances built from tools/, and their transports."""

__all__: list[str] = []
