"""The memory graph's full-text index, one module per engine, and the choice between them."""

__all__: list[str] = []
