"""The context store's full-text index, one module per engine, and the words both index."""

__all__: list[str] = []
