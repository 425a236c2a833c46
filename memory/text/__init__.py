"""Words: the one splitter and the one stemmer every lexical step of Loci uses."""

from loci.memory.text.stems import stem
from loci.memory.text.terms import Terms
from loci.memory.text.words import words

__all__ = ["Terms", "stem", "words"]
