"""Who may call a server over HTTP: bearer tokens, the principals they name, and the project apps each principal
reaches.
"""

__all__: list[str] = []
