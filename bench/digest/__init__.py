"""Long documents, `loci bench digest`: what digest jobs cost, and how well they answer on planted facts."""

__all__: list[str] = []
