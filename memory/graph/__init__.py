"""The memory graph: facts, episodes and procedures, their edges, recall, entities, conversations and export."""

__all__: list[str] = []
