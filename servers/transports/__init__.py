"""How the servers reach their clients: stdio (with the early answers while the server loads), streamable HTTP and its
bounds, and the thin paths of the hot calls.
"""

__all__: list[str] = []
