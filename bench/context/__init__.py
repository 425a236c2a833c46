"""The context, `loci bench context`, `context-store` and `navigate`: the prompt a turn sends, and the context
store loaded, searched and navigated at scale, on synthetic corpora.
"""

__all__: list[str] = []
