"""The database engines a home runs on: SQLite (the embedded default) and PostgreSQL."""

__all__: list[str] = []
