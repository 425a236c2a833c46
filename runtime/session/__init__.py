"""A session's wiring: open_session, background workers, memory in the loop, the run_task tool."""

__all__: list[str] = []
