"""A question's terms, and which of them a line holds: words, their other forms, and words run together.

`Terms` is what one question asks, as stems (`memory.text.stems.stem`). A
line holds a term when one of its words has the term's stem, or a word the
question's word is often said with on such a line (`RELATED`: asked who
"wrote" a module, the line says `__author__`), or when one of its words is
several of the question's words run together, as identifiers write them:
`BUFSIZE` holds "buffer" and "size" (`buf` is buffer's short form),
`_MAXLINE` holds "max" and "line", for a question that says "copy buffer
size" or "maximum line". A related word is held as a term of its own
(`RELATED_MARK`): asked for bz2's "author", `__author__` holds "author",
rare in the file, and the many lines that say "write" hold `~author`, which
their number makes weigh little; when both counted as "author", the
shortest of them, `_MODE_WRITE = 3`, was the answer. `pattern` finds the lines worth splitting: any word
that starts with a term's stem, one of its forms (`wrote` for write, `buf`
for buffer) or a related word. The domain of an e-mail address is where
the mail goes, not what the line is about: `<ntyni@debian.org>` holds no
"debian" (asked who packaged perl "for Debian", that address outranked
"initially debianized by Brendan O'Dea"); nor is a Debian copyright file's
`Format:` line about anything but the file's format: it holds no term.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from loci.memory.text.stems import SPELLINGS, forms, stem
from loci.memory.text.words import words

__all__ = ["RELATED", "RELATED_MARK", "Terms"]

# A question's word, and the words a line that answers it often says instead (one way: a line that says
# "error" answers a question about an "exception", and a line that says "author" one about who "wrote").
RELATED: dict[str, tuple[str, ...]] = {
    "write": ("author",),
    "author": ("write",),
    "create": ("author",),
    "exception": ("error",),
    "error": ("exception",),
    "option": ("flag",),
    "flag": ("option",),
    "secure": ("ssl", "tls"),  # "the secure port" is `NNTP_SSL_PORT`
    "first": ("initial", "original"),  # "who packaged perl first?": "initially debianized by Brendan O'Dea"
    "nmu": ("non-maintainer",),  # a Debian changelog says "Non-maintainer upload." of what is asked as an NMU
}
_RELATED = {stem(word): tuple(stem(other) for other in others) for word, others in RELATED.items()}
_DOMAIN = re.compile(r"(?<=[\w.+-])@[\w-]+(?:\.[\w-]+)+")  # an e-mail address's `@domain`
_FORMAT = re.compile(r"\s*Format:\s*\S*copyright-format", re.IGNORECASE)  # a Debian copyright file's first line
RELATED_MARK = "~"  # a term held by a related word: `~write` for `__author__`, asked who wrote
MIN_PIECE = 2  # the shortest piece of a word run together (`fd`, `id`)
MIN_JOINED = 5  # the shortest word tried as several run together


class Terms:
    """The stems of one question's content words (`stems`), and what a line holds of them."""

    def __init__(self, stems: Iterable[str], *, ignore: frozenset[str] = frozenset()) -> None:
        self.stems = set(stems)
        self.ignore = ignore  # words a line's side leaves out (the question frame's stop words)
        self._means: dict[str, str] = {term: term for term in self.stems}
        for term in self.stems:
            for other in _RELATED.get(term, ()):
                self._means.setdefault(other, RELATED_MARK + term)
        self._joined: dict[str, frozenset[str]] = {}

    def held(self, text: str) -> set[str]:
        """The question's stems that a line holds: by a word's stem, a related word's (as `RELATED_MARK` and
        the stem: a term of its own, so a ranker weighs it by its own rarity), or words run together."""
        found: set[str] = set()
        if _FORMAT.match(text):
            return found
        for word in words(_DOMAIN.sub(" ", text) if "@" in text else text):
            if word in self.ignore:
                continue
            term = self._means.get(stem(word))
            if term is not None:
                found.add(term)
            elif len(word) >= MIN_JOINED and word.isalpha():
                found |= self._split(word)
        return found

    def _split(self, word: str) -> frozenset[str]:
        """The terms a word is made of when it is two or more of them run together (`bufsize`), else none."""
        if word not in self._joined:
            self._joined[word] = frozenset(self._pieces(word, 0) or ())
        return self._joined[word]

    def _pieces(self, word: str, depth: int) -> set[str] | None:
        """The terms `word` is cut into, every piece one of them (at most three pieces); None when it is not."""
        for cut in range(len(word), MIN_PIECE - 1, -1):
            term = self._means.get(stem(word[:cut]))
            if term is None:
                continue
            if cut == len(word):
                if depth:
                    return {term}
                continue
            if depth < 2 and len(word) - cut >= MIN_PIECE and (more := self._pieces(word[cut:], depth + 1)):
                return {term, *more}
        return None

    def pattern(self) -> re.Pattern[str]:
        """Any word that starts with a term's stem (less a last letter a stem may change: `copi` for copy), a
        form of it (`wrote` for write, `buf` for buffer) or a related word's: a coarse filter that `held`
        makes exact."""
        wanted: set[str] = set()
        for term in self._means:
            wanted.add(term[: max(MIN_PIECE, len(term) - 1)] if term.isalpha() else term)
            wanted.update(forms(term))
        wanted |= {british for british, american in SPELLINGS.items() if stem(american) in self._means}
        alternatives = "|".join(re.escape(t) for t in sorted(wanted, key=len, reverse=True))
        return re.compile(rf"(?<![^\W_])(?:{alternatives})", re.IGNORECASE)
