"""The persisted job queue and the worker that runs background work from it."""

__all__: list[str] = []
