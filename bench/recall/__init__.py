"""Recall: how well it finds the evidence (`loci bench recall`, on LoCoMo, BEAM or the generated set) and how fast
the graph answers at scale (`loci bench memory`).
"""

__all__: list[str] = []
