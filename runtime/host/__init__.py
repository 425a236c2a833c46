"""The MCP host: the runtime as a client of its built-in and configured servers."""

__all__: list[str] = []
