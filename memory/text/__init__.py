"""Words: the one splitter and the one stemmer every lexical step of Loci uses."""

from memory.text.stems import stem
from memory.text.terms import Terms
from memory.text.words import words

__all__ = ["Terms", "stem", "words"]
