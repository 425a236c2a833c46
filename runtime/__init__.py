"""The agent: turn loop, model backends, budgets, MCP host, CLI."""

__all__: list[str] = []
