"""The words of a question that name the document it is asked of: they say which file, not which line.

Asked "What's the lzma constant in zipfile?" of `zipfile.py`, every line is
zipfile's, and the word that ranks best for "zipfile" is `class ZipFile:`,
which answers nothing; the line that does, `ZIP_LZMA = 14`, then scores
under half of it and no longer counts as about the question. So the lines
are ranked for the question without the words that name the documents
asked of (`without_documents`): the words of a document's file name up to
its first dot (`zipfile.py`: "zipfile", `man-grep.txt`: "grep",
`sed-changelog.Debian`: "sed"), except the names files of every package
have (`copyright`, `changelog`, `README`: a question's "copyright" asks for
the `Copyright:` line) and the words that say what kind of page it is
(`man`, `doc`); the folder of a file with such a name names it
(`/usr/share/doc/git/copyright`: "git"). A word is left out
only when it names every document asked of (of several, a word naming one
says which to read), only whole, with its `'s` (`zipfile.ZipFile` and
`is_zipfile` stay), and a
question that would be left with fewer than `LEFT` words of its own stays
as it is ("What's gzip's homepage?" is asked of gzip's README whole).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from loci.memory.context.lexical import content_terms

__all__ = ["LEFT", "document_words", "shared_words", "without_documents"]

# Names that files of every package have: the word names the kind of file, which the question may ask about.
_SHARED_NAMES = frozenset(
    "authors changelog changes copying copyright doc docs history index install license licence man news notice"
    " page readme todo".split()
)
_WORD = re.compile(r"(?<![\w.\-/])([A-Za-z][\w-]*)(?:['’]s)?(?![\w./-]*\w)")
LEFT = 2  # the question's own words left for lines to be ranked by, or it stays whole


def document_words(names: Iterable[str]) -> set[str]:
    """The words that name the documents `names` (file names or paths): the words of each file name up to its
    first dot, folded; for a name files of every package have, its folder's (`/usr/share/doc/git/copyright`:
    "git")."""
    found = set()
    for name in names:
        parts = [part for part in re.split(r"[/\\]+", name) if part]
        for part in reversed(parts[-2:]):
            kept = _words(part)
            if kept or part.split(".", 1)[0].casefold() not in _SHARED_NAMES:
                found |= kept
                break
    return found


def _words(file_name: str) -> set[str]:
    stem = file_name.split(".", 1)[0].casefold()
    return {word for word in re.split(r"[-_\s]+", stem) if len(word) > 2 and word not in _SHARED_NAMES}


def shared_words(names: Iterable[str]) -> set[str]:
    """The words that name every one of the documents `names`: with several documents, a word naming one of
    them says which to read ("bzip2" beside bash's copyright file), and is kept."""
    each = [document_words([name]) for name in names]
    return set.intersection(*each) if each else set()


def without_documents(question: str, names: Iterable[str]) -> str:
    """`question` without the whole words that name every document of `names` (`shared_words`); as it is when
    nothing else of it would be left to rank by."""
    named = shared_words(names)
    if not named:
        return question
    kept = _WORD.sub(lambda m: "" if m.group(1).casefold() in named else m.group(0), question)
    kept = re.sub(r"\s{2,}", " ", kept).strip()
    return kept if len([term for term in content_terms(kept) if len(term) > 1]) >= LEFT else question
