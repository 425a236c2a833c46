"""The one stemmer: the forms of a word that belong together meet on one stem.

`stem` takes a word to its root the same way on every side of a comparison
(a question's words and a line's): an abbreviation an identifier uses to
the word it stands for (`buf` buffer, `max` maximum: `ABBREVIATIONS`), a
British spelling to the American one (`licence` license: `SPELLINGS`), an
inflected form to its lemma by lemminflect's lexicon (`wrote` and `written`
to write, `children` to child, `ran` to run: every irregular English form,
from the data in its wheel), then the Snowball English stemmer (PyStemmer,
the family FTS5's `porter` and PostgreSQL's `english` belong to: `sized`,
`sizes` and `size` meet, `licensed` and `license`). Identifiers and numbers
(anything that is not all letters) are compared as they are.

`forms` gives a stem's surface forms (its lemma's inflections and the
abbreviations that stand for it), so a coarse search for the stem's
prefixes still finds `wrote` for `write` and `buf` for buffer.

Measured against the light suffix rule and the hand table of irregular
verbs this replaces, on the real-file questions asked in several
phrasings: see docs/benchmarks.md. WordNet (Debian's `wordnet-base`) was
tried for the relations no stemmer makes ("wrote" and "author"): nltk's
reader refuses a corpus outside its own data folders and needs a
`lexnames` file the Debian package leaves out, so those few relations are
the question's own (`memory.text.terms.RELATED`).
"""

from __future__ import annotations

from functools import lru_cache

import lemminflect
import Stemmer

__all__ = ["ABBREVIATIONS", "SPELLINGS", "forms", "lemma", "stem"]

_SNOWBALL = Stemmer.Stemmer("english")
_LEMMA_ORDER = ("VERB", "NOUN", "ADJ", "ADV")

# Short forms identifiers use, to the word they stand for.
ABBREVIATIONS = {
    "buf": "buffer",
    "bufs": "buffers",
    "max": "maximum",
    "min": "minimum",
    "len": "length",
    "num": "number",
    "dir": "directory",
    "msg": "message",
    "err": "error",
    "exc": "exception",
    "arg": "argument",
    "args": "arguments",
    "param": "parameter",
    "params": "parameters",
    "cfg": "configuration",
    "config": "configuration",
    "conf": "configuration",
    "addr": "address",
    "pkg": "package",
    "lib": "library",
    "env": "environment",
    "sep": "separator",
    "idx": "index",
    "ctx": "context",
    "tmp": "temporary",
    "temp": "temporary",
    "cmd": "command",
    "attr": "attribute",
    "attrs": "attributes",
    "val": "value",
    "var": "variable",
    "src": "source",
    "dst": "destination",
    "dest": "destination",
    "func": "function",
    "prev": "previous",
    "info": "information",
    "hdr": "header",
    "sz": "size",
    "recv": "receive",
    "ts": "timestamp",
}
# British spellings, to the American the Snowball stemmer is written for.
SPELLINGS = {
    "licence": "license",
    "licences": "licenses",
    "licenced": "licensed",
    "colour": "color",
    "behaviour": "behavior",
    "favour": "favor",
    "honour": "honor",
    "centre": "center",
    "catalogue": "catalog",
    "analyse": "analyze",
    "organise": "organize",
    "recognise": "recognize",
    "initialise": "initialize",
    "serialise": "serialize",
    "normalise": "normalize",
}
_STANDS_FOR: dict[str, list[str]] = {}
for _short, _long in ABBREVIATIONS.items():
    _STANDS_FOR.setdefault(_long, []).append(_short)


@lru_cache(maxsize=65_536)
def lemma(word: str) -> str:
    """`word` (case folded) as its dictionary form: a short form's word, the American spelling, the lemma."""
    word = ABBREVIATIONS.get(word, word)
    word = SPELLINGS.get(word, word)
    found = lemminflect.getAllLemmas(word)
    for kind in _LEMMA_ORDER:
        if found.get(kind):
            return str(found[kind][0])
    return word


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The stem `word` meets its other forms on; a word that is not all letters as it is (case folded)."""
    word = word.casefold()
    if not word.isalpha():
        return word
    return str(_SNOWBALL.stemWord(lemma(word)))


@lru_cache(maxsize=4_096)
def forms(word: str) -> tuple[str, ...]:
    """The surface forms of the word `word`'s stem is met on: its lemma's inflections and its short forms."""
    root = lemma(word.casefold())
    found = {root}
    for inflected in lemminflect.getAllInflections(root).values():
        found.update(inflected)
    found.update(_STANDS_FOR.get(root, ()))
    for inflected in list(found):
        found.update(_STANDS_FOR.get(inflected, ()))
    return tuple(sorted(found))
