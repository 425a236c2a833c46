"""The SQLite engine, the embedded default: one file in WAL mode, one writer and pooled readers, its dialect."""

__all__: list[str] = []
