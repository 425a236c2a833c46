"""Does the memory learn: `loci bench evolution` on its synthetic task world and, with `--data`, on real
conversations, with the bound of what feedback could teach recall and the timings at scale.
"""

__all__: list[str] = []
