"""The kinds of a thing, from WordNet: "martial arts" to taekwondo, judo and karate.

A question names a kind ("what martial arts has John done?"); the turn that
answers it names an instance ("I started taekwondo"). No stemmer joins the two,
and BM25 cannot. WordNet 3.0 can: its noun `taekwondo` is a hyponym of
`martial_art`. `narrower` gives, for a noun compound a text holds (two or three
words WordNet lists as one noun: "martial arts", "board game", "ice cream"),
the one-word names of its hyponyms two levels down, so recall can search them
beside the question's own words (`memory.graph.terms.searched_terms`).

Compounds only: a single word's kinds are too many and too loose ("book" has
hundreds, "art" reaches "magic"), while a compound names a kind narrowly enough
that its instances are what a person means by it. A kind's word counts only when
the kind is the word's first sense, the one WordNet finds most used (`taekwondo`;
not `organ`, whose first sense is the body's, for a musical instrument, nor
`reason` for mental health). `CAP` kinds at most a compound.

The data is Debian's `wordnet-base` (`/usr/share/wordnet`, the Princeton files
`index.noun` and `data.noun`), read in place: the index by binary search over
its sorted lines, a synset by its byte offset. Where the files are absent there
are no kinds, and recall searches the question's words only. Standard library
only: the hook process recalls through this. The plural of a compound's last word
is folded as WordNet's own `morphy` does (`noun.exc`, then its suffix rules).
"""

from __future__ import annotations

import mmap
import re
from functools import lru_cache
from pathlib import Path

__all__ = ["CAP", "WORDNET", "narrower"]

WORDNET = Path("/usr/share/wordnet")
CAP = 24
_LEVELS = 2
# WordNet's noun suffix rules (morphy): an inflected ending to the base's.
_SUFFIXES = (("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y"))
_SUFFIXES += (("s", ""),)
_WORD = re.compile(r"^[a-z]{3,}$")


class _Files:
    """`index.noun`, `data.noun` and `noun.exc` of one WordNet folder, mapped read-only."""

    def __init__(self, folder: Path) -> None:
        self.index = _mapped(folder / "index.noun")
        self.data = _mapped(folder / "data.noun")
        self.exceptions: dict[str, str] = {}
        for line in (folder / "noun.exc").read_text(encoding="latin-1").splitlines():
            inflected, _, base = line.partition(" ")
            self.exceptions.setdefault(inflected, base.split(" ")[0])

    def synsets(self, lemma: str) -> list[int]:
        """The byte offsets of `lemma`'s noun synsets in `data.noun` (none when it is not a noun)."""
        line = _find(self.index, lemma.encode())
        if line is None:
            return []
        fields = line.split()
        pointers = int(fields[3])
        return [int(f) for f in fields[6 + pointers :]]

    def synset(self, offset: int) -> tuple[list[str], list[int]]:
        """A synset's words and its hyponyms' offsets."""
        end = self.data.find(b"\n", offset)
        fields = self.data[offset:end].split(b" | ")[0].split()
        count = int(fields[3], 16)
        words = [w.decode("latin-1").lower() for w in fields[4 : 4 + 2 * count : 2]]
        at = 4 + 2 * count
        pointers = int(fields[at])
        hyponyms = []
        for i in range(pointers):
            symbol, target, pos = fields[at + 1 + 4 * i : at + 4 + 4 * i]
            if symbol in (b"~", b"~i") and pos == b"n":
                hyponyms.append(int(target))
        return words, hyponyms

    def base(self, word: str) -> list[str]:
        """The forms `word` may be the plural of, itself first (WordNet's noun `morphy`)."""
        forms = [word]
        if word in self.exceptions:
            forms.append(self.exceptions[word])
        forms += [word[: -len(end)] + to for end, to in _SUFFIXES if word.endswith(end) and len(word) > len(end) + 1]
        return list(dict.fromkeys(forms))


def _mapped(path: Path) -> mmap.mmap:
    with path.open("rb") as handle:
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


def _find(index: mmap.mmap, key: bytes) -> bytes | None:
    """The line of the sorted `index` that starts with `key` and a space (the licence lines, which start
    with a space, sort first)."""
    low, high = 0, len(index)
    while low < high:
        middle = (low + high) // 2
        start = index.rfind(b"\n", 0, middle) + 1
        end = index.find(b"\n", start)
        end = len(index) if end < 0 else end
        lemma = index[start:end].split(b" ", 1)[0]
        if lemma < key:
            low = end + 1
        else:
            high = start
    end = index.find(b"\n", low)
    line = index[low : end if end >= 0 else len(index)]
    return line if line.startswith(key + b" ") else None


@lru_cache(maxsize=1)
def _files() -> _Files | None:
    try:
        return _Files(WORDNET)
    except (OSError, ValueError):
        return None


@lru_cache(maxsize=4096)
def _kinds(compound: str) -> tuple[str, ...]:
    files = _files()
    if files is None:
        return ()
    *head, last = compound.split("_")
    for form in files.base(last):
        offsets = files.synsets("_".join([*head, form]))
        if offsets:
            break
    else:
        return ()
    named = set(compound.split("_"))
    found: list[str] = []
    level = offsets[:1]  # the compound's first sense: what it most often names
    for _ in range(_LEVELS):
        below = []
        for offset in level:
            _, hyponyms = files.synset(offset)
            for child in hyponyms:
                words, _ = files.synset(child)
                found += [w for w in words if _WORD.match(w) and w not in named and files.synsets(w)[:1] == [child]]
                below.append(child)
        level = below
    return tuple(dict.fromkeys(found))[:CAP]


def narrower(words: list[str]) -> list[str]:
    """The one-word kinds of the noun compounds among `words` (consecutive, case-folded), in WordNet's order."""
    found: list[str] = []
    for size in (3, 2):
        for start in range(len(words) - size + 1):
            part = words[start : start + size]
            if all(w.isalpha() for w in part):
                found += _kinds("_".join(part))
    return [w for w in dict.fromkeys(found) if w not in words]
