"""Record tables of the home: runs, chat sessions, digest jobs, tokens."""

__all__: list[str] = []
