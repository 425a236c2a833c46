"""The one splitter: a text's words, each identifier whole and in its parts.

A text is split on what is not a letter, digit, `_`, `-` or `.`; each run
is then taken whole and in its parts (the index's words,
`memory.text.tokens.TOKEN`), both searchable: `DEFAULT_FORMAT`
gives `default_format`, `default` and `format`; `--sort-keys` gives
`sort-keys`, `sort` and `keys`; `os.path` gives `os.path`, `os` and `path`;
a camel-case part is split where a lower-case letter meets a capital
(`getLogger`: `getlogger`, `get`, `logger`; `HTTPServer`: `http`, `server`).
A run's leading and trailing `-`, `_` and `.` are not part of it (the full
stop after "Bethard." is not). Words are case folded. A part written as
one word of several (`BUFSIZE`, `MAXLINE`) is met by the question's own
words in `memory.text.terms`, which knows what was asked.
"""

from __future__ import annotations

import re

from loci.memory.text.tokens import TOKEN

__all__ = ["JOINERS", "RUN", "words"]

RUN = re.compile(r"[\w.\-]+")
JOINERS = "-_."
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def words(text: str) -> list[str]:
    """The words of `text`, case folded, in order: each identifier whole, then its parts."""
    found: list[str] = []
    for run in RUN.findall(text):
        raw = run.strip(JOINERS)
        if not raw:
            continue
        whole = raw.casefold()
        pieces = TOKEN.findall(raw)
        if len(pieces) > 1 or (pieces and pieces[0] != raw):
            found.append(whole)
        for piece in pieces:
            found.append(piece.casefold())
            camel = _CAMEL.split(piece)
            if len(camel) > 1:
                found += [part.casefold() for part in camel]
    return found
