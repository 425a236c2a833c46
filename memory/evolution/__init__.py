"""The evolving memory: formation, refinement, distillation, granularity and consolidation."""

__all__: list[str] = []
