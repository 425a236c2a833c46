"""The prompt: its regions, the window of turns and the notes that fold them, what fits, which tools are read."""

__all__: list[str] = []
