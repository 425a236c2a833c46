"""The local model's own speed: a turn's time against naive full history (`loci bench latency`) and llama.cpp's
extra buffer types (`loci bench llama-modes`).
"""

__all__: list[str] = []
