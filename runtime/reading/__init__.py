"""Reading documents: the first look at the best lines, the checks on an answer, its evidence."""

__all__: list[str] = []
