"""Words: the one splitter, stemmer, index tokenizer, line ranker, newer-value rule and repeat check of Loci.

The stemmer (`stem`, and `Terms`, which stems) is read from its module when
first asked for (PEP 562): a light process (a coding agent's hook, which
splits and ranks through `tokens` and `values`) never loads the lexicon
that `stems` reads. The rest is the standard library's.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from loci.memory.text.lines import Ranker
from loci.memory.text.repeats import first_repeat, flat
from loci.memory.text.tokens import query_words, word_tokens
from loci.memory.text.values import changes
from loci.memory.text.words import words

__all__ = ["Ranker", "Terms", "changes", "first_repeat", "flat", "query_words", "stem", "word_tokens", "words"]

_STEMMED = {"Terms": "terms", "stem": "stems"}  # the names whose modules load the stemmer


def __getattr__(name: str) -> Any:
    if name not in _STEMMED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_STEMMED[name]}"), name)
