"""The context store: documents, tool results, turns and notes, stored once, read in ranges, searched."""

__all__: list[str] = []
