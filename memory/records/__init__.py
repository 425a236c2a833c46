"""Record tables of the home: runs, chat sessions, digest jobs."""

__all__: list[str] = []
