"""The PostgreSQL engine: a pool of psycopg connections, its own ordered migrations and dialect."""

__all__: list[str] = []
