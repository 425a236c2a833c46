"""The database engines a home runs on: SQLite (the embedded default) and PostgreSQL, a subpackage each with the
same shape (`store`, `connection`, `dialect`, `health`, `migrations`), and what both share here (`base`, `select`,
`dialects`, `copy`)."""

__all__: list[str] = []
