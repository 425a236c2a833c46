"""Right answers on a model, Loci beside the same model prompted directly and beside plain retrieval: `loci bench qa`
on its generated sets, LoCoMo, BEAM and the real-file set.
"""

__all__: list[str] = []
