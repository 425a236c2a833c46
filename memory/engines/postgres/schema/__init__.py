"""PostgreSQL's migration sets, one module per concept (listed in memory/engines/postgres/migrations.py)."""

__all__: list[str] = []
