"""Conversation and memory files from other tools, read into the memory graph: one reader per format."""

__all__: list[str] = []
