"""What a line gives for the thing asked: a name's own value, a field's value, an option, an exception.

A file states a fact on a line shaped for it, and a question names the
thing the line is about, and often the kind of value it wants (`answer_kind`:
a date, an option, an exception). `asked_names` are the identifiers a question names
(`COPY_BUFSIZE`, `BPF`, `check_call`: a word with `_`, a digit or an inner
`.`, or one in capitals). `definition` is the value a line assigns to a name
(`COPY_BUFSIZE = 1024 * 1024 if _WINDOWS else 64 * 1024` gives the whole
expression after `=`, its comment left out; `RECIP_BPF = 2 ** -BPF` gives
nothing for `BPF`). `field` reads a line shaped `key: value` or
`key = value` (`Upstream-Name: GNU Gzip`, `__author__ = 'Ka-Ping Yee
<ping@zesty.ca>'`, `# Written by Greg Ward`), `options` the options a line of a manual defines
(`-S     sort by file size, largest first`: `-S`), `exceptions` the
exception names on a line (`CalledProcessError`), `persons` the people a
line names as people (a name before an e-mail address, a name after "by":
`This package was put together by Matthias Klose <doko@debian.org>`).
`names` gives a value's person or thing without the e-mail address and the
years beside it.

A name's comment says what the name is (`DEFAULT_ENTROPY = 32  # number of
bytes to return by default`): `meant_names` takes a name the question asks
about in the comment's words as well as in the name's own.

`runtime.reading.spans` makes its candidate answers of these;
`runtime.reading.values.not_the_value` holds an answer to the definition of
the name the question asks about.
"""

from __future__ import annotations

import re

from loci.memory.context.lexical import asked, content_terms, line_terms
from loci.memory.text import words
from loci.memory.text.terms import Terms

__all__ = [
    "ASKS_OPTION",
    "NEGATED",
    "answer_kind",
    "asked_names",
    "definition",
    "exceptions",
    "field",
    "meant_names",
    "names",
    "names_someone",
    "options",
    "persons",
    "addresses",
    "counted",
    "counts",
    "heading",
    "references",
    "section",
]

ASKS_OPTION = re.compile(r"\b(options?|flags?|switch(es)?)\b", re.IGNORECASE)  # the words that ask for an option
_KINDS = (
    (
        "date",
        re.compile(
            r"\s*((on|in)\s+)?(when|(what|which)(['\u2019]s\s+|\s+(is|was)\s+|\s+)(the\s+)?(day|date|month|year|time))\b",
            re.I,
        ),
    ),
    ("option", re.compile(rf".*{ASKS_OPTION.pattern}", re.IGNORECASE)),
    ("exception", re.compile(r".*\b(exceptions?|errors?)\b.*\brais", re.IGNORECASE)),
)

_IDENTIFIER = re.compile(r"(?<![\w.-])([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)(?![\w-])")
_ASSIGN = re.compile(r"^\s*(?:self\.)?([A-Za-z_][\w.]*)\s*(?::\s*[^=]+?)?\s*=(?!=)\s*(.+?)\s*$")
_FIELD = re.compile(r"^\s*(?:#+|//|;+|\*|--)?\s*([A-Za-z_][\w.-]*)\s*([:=])\s*(\S.*?)\s*$")
_BY = re.compile(r"^\W*((?:written|maintained|created|developed|edited|contributed|made)\s+by)\s+(\S.*?)\s*$", re.I)
# an option's argument: `=WORD`, `[=WHEN]`, `[={name|descriptor}]`, `=[+]NUM`, ` NUM`
_ARGUMENT = r"(?:\[?=[^\s,]+|\s[A-Z][A-Z_]*)?"
_OPTION_LINE = re.compile(
    rf"^\s*(-{{1,2}}[A-Za-z0-9?][\w-]*{_ARGUMENT}(?:,\s*-{{1,2}}[A-Za-z0-9?][\w-]*{_ARGUMENT})*)(?:\s{{2,}}|$)"
)
_OPTION = re.compile(r"(?<![\w-])(-{1,2}[A-Za-z0-9?][\w-]*)")
_EXCEPTION = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt))\b")
_COMMENT = re.compile(r"\s+#.*$")
_EMAIL = re.compile(r"\s*[<(][^<>()\s]+@[^<>()\s]+[>)]")
_YEARS = re.compile(r"^\s*(?:(?:\(c\)|©)\s*)?(?:\d{4}(?:\s*[-,]\s*\d{4})*,?\s+)?", re.IGNORECASE)
_NOTICE = re.compile(r"^\W*copyright\s+((?:\(c\)|©)\s*\S.*?)\s*$", re.IGNORECASE)  # `Copyright (c) The Regents ...`
_QUOTES = "'\"`"
# A person's name: capitalised words (`Brendan O'Dea`, `Jean-loup Gailly`), particles inside (`Guido van Rossum`).
_PERSON = r"[A-Z][\w'’-]*\.?(?:\s+(?:(?:van|von|de|der|den|da|di|du|la|le)\s+)?[A-Z][\w'’-]*\.?)+"
_MAILED = re.compile(rf"({_PERSON})\s*[<(][^<>()\s]+@[^<>()\s]+[>)]")
_BY_PERSON = re.compile(rf"\bby\s+({_PERSON})")
_SOMEONE = re.compile(rf"(?<![\w'’]){_PERSON}|[\w.+-]+@[\w-]+\.\w")
_HOW_MANY = re.compile(r"\bhow\s+(?:many|much)\s+([A-Za-z]+)", re.IGNORECASE)
_COUNT = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)((?:\s+[A-Za-z]+){1,2})")  # a number, the words after it
_SECTION_ASKED = re.compile(r"\bsection\s+(\d+(?:\.\d+)*)", re.IGNORECASE)
_ADDRESS = re.compile(r"\b(?:https?|ftp)://[^\s<>\"']+|\bwww\.[^\s<>\"']+")
_REFERENCES = (
    ("cve", re.compile(r"\bCVE-\d{4}-\d{4,}\b")),
    ("bug", re.compile(r"#(\d{3,})\b")),
)
# the words a question asks to be without ("Which port ... without SSL?": SSL)
NEGATED = re.compile(r"\b(?:without|except|excluding|other\s+than|non-)\s*(?:an?\s+|the\s+)?([\w.-]+)", re.I)
_COMMENTED = 2  # a name is meant when its comment and parts hold this many of the question's words


def answer_kind(question: str) -> str | None:
    """The kind of value `question` asks for: "date" ("When ...", "What year ..."), "option" ("Which ls
    option ..."), "exception" ("Which exception does ... raise?"), or None."""
    return next((kind for kind, asks in _KINDS if asks.match(question)), None)


def asked_names(question: str) -> list[str]:
    """The identifiers the question names: a word with `_`, a digit or an inner `.`, or in capitals."""
    found = []
    for name in _IDENTIFIER.findall(question):
        bare = name.strip("_")
        if not bare:
            continue
        if "_" in name or "." in name or any(c.isdigit() for c in name) or (bare.isupper() and len(bare) > 1):
            found.append(name)
    return list(dict.fromkeys(found))


def meant_names(question: str, lines: list[str], *, whole: str = "") -> list[str]:
    """The names the question asks about: those it names (`asked_names`), and the names the lines assign
    whose every part, two or more, the question says in its own words ("copy buffer size": `COPY_BUFSIZE`,
    "bytes of entropy by default": `DEFAULT_ENTROPY`) or begins (`SMTP_PORT` for "Which port does smtplib
    connect to?"), and none it asks to be without ("... without SSL": not `POP3_SSL_PORT`). `whole` is the
    question with the words that name its documents, when `question` is ranked without them: a module's
    constants begin with its name (`TELNET_PORT` for "What port does telnetlib use?"). Of two names said
    whole, the one whose parts say less of the question is not meant: asked the "secure" port of nntplib,
    `NNTP_SSL_PORT` says "secure" and `NNTP_PORT` does not."""
    found = asked_names(question)
    terms = asked(set(content_terms(question)) - set(content_terms(" ".join(NEGATED.findall(question)))))
    unwanted = {word.casefold() for word in NEGATED.findall(question)}
    begun = [w.casefold() for w in re.findall(r"[A-Za-z]\w{2,}", f"{question} {whole}") if w.casefold() not in unwanted]
    meant: dict[str, set[str]] = {}  # each name meant, and what of the question its parts say (said whole)
    for line in lines:
        match = _ASSIGN.match(line)
        if not match or match.group(1) in found or match.group(1) in meant:
            continue
        parts = [part for part in words(match.group(1)) if part != match.group(1).casefold().strip("_")]
        held = [terms.held(part) or ({part} if _begun(part, begun) else set()) for part in parts]
        comment = _COMMENT.search(match.group(2))
        if len(parts) >= 2 and all(held):
            meant[match.group(1)] = set().union(*held)
        elif comment and _commented(terms, match.group(1), comment.group(0)):
            meant[match.group(1)] = set()
    said = [says for says in meant.values() if says]
    return found + [name for name, says in meant.items() if not says or not any(says < other for other in said)]


def _begun(part: str, begun: list[str]) -> bool:
    """Whether a word of the question begins with the name's part, its digits aside (`SMTP`: "smtplib";
    `POP3`: "poplib"): a module's constants begin with its name."""
    stem = part.rstrip("0123456789")
    return len(stem) > 2 and any(word.startswith(stem) and word != part for word in begun)


def _commented(terms: Terms, name: str, comment: str) -> bool:
    """Whether the question asks about `name` in its own words and its comment's: a part of the name, and
    `_COMMENTED` of the question's words in all (`DEFAULT_ENTROPY = 32  # number of bytes to return by
    default` for "How many bytes does secrets use by default?")."""
    named = terms.held(" ".join(words(name)))
    return bool(named) and len(named | terms.held(comment.strip(" #"))) >= _COMMENTED


def definition(line: str, name: str) -> str | None:
    """The value `line` assigns to `name` (`NAME = value`, its comment left out, its quotes kept), or None."""
    match = _ASSIGN.match(line)
    if not match or match.group(1).casefold() != name.casefold():
        return None
    value = _COMMENT.sub("", match.group(2)).strip().rstrip(",;")
    return value or None


def field(line: str) -> tuple[str, str, str] | None:
    """A line shaped `key: value`, `key = value`, `Written by value` or `Copyright (c) value`, as (key, value
    without its quotes and comment, the comment); else None."""
    match = _FIELD.match(line)
    key, said = (match.group(1), match.group(3)) if match else (None, "")
    if match is None and (by := _BY.match(line)):
        key, said = by.group(1), by.group(2)
    elif match is None and (notice := _NOTICE.match(line)):
        key, said = "Copyright", notice.group(1)
    if key is None:
        return None
    # a comment says what a name assigned in code is; after `key:` (a chat's `user: ... # 3`) it is text
    comment = _COMMENT.search(said) if match and match.group(2) == "=" else None
    value = _COMMENT.sub("", said).strip() if comment else said.strip()
    if len(value) > 1 and value[0] in _QUOTES and value[-1] == value[0]:
        value = value[1:-1].strip()
    return (key, value, comment.group(0).strip(" #") if comment else "") if value else None


def names(value: str) -> str:
    """A field's value as its person or thing: the years before it and the e-mail address after it left out."""
    return _EMAIL.sub("", _YEARS.sub("", value)).strip(" ,;.")


def names_someone(value: str) -> bool:
    """Whether a value may name someone: two or more capitalised words in a row (`Piers Lauder (original)`,
    `The Regents of the University of California`) or an e-mail address; not `Written on stream to ask for the
    input.  Default: 'Password: '`."""
    return bool(_SOMEONE.search(value))


def options(line: str) -> list[str]:
    """The options a line of a manual defines, at its start (`-S`, `--sort=WORD`: `--sort`); [] for another line."""
    match = _OPTION_LINE.match(line)
    return _OPTION.findall(match.group(1)) if match else []


def persons(line: str) -> list[str]:
    """The people `line` names as people: a name before an e-mail address, a name after "by" (`This package
    was put together by Matthias Klose <doko@debian.org>`: `Matthias Klose`), in order."""
    found = [m.group(1) for m in _MAILED.finditer(line)] + [m.group(1) for m in _BY_PERSON.finditer(line)]
    return list(dict.fromkeys(name.rstrip(".") for name in found))


def counted(question: str) -> str | None:
    """The thing a "How many ...?" question counts ("How many days ...": "days"), or None."""
    match = _HOW_MANY.search(question)
    return match.group(1) if match and line_terms(match.group(1)) else None  # not "How much does ..."


def counts(line: str, thing: str) -> list[str]:
    """The numbers of `thing` a line states, with it (`prior to 30 days after`: "30 days"; `the first 10 lines`
    for "lines")."""
    wanted = line_terms(thing)
    if not wanted:
        return []
    found = []
    for match in _COUNT.finditer(line):
        after = match.group(2).split()
        for end in range(len(after)):
            if line_terms(after[end]) == wanted:
                found.append(f"{match.group(1)} {' '.join(after[: end + 1])}")
                break
    return found


def section(question: str) -> str | None:
    """The number of the section a question asks about ("What is section 7 about?": "7"), or None."""
    match = _SECTION_ASKED.search(question)
    return match.group(1) if match else None


def heading(line: str, number: str) -> str | None:
    """The title a line gives section `number` (`7. Disclaimer of Warranty. Unless ...`: "Disclaimer of
    Warranty"), or None."""
    match = re.match(rf"^\W*(?:section\s+)?{re.escape(number)}\.?\s+([A-Z][^.:;]{{1,80}}?)\s*(?:[.:;]|$)", line, re.I)
    return match.group(1).strip() if match else None


def addresses(line: str) -> list[str]:
    """The web addresses on a line (`http://mozilla.org/MPL/2.0/`), without the punctuation after them."""
    return [m.group(0).rstrip(".,;:)>'\"") for m in _ADDRESS.finditer(line)]


def references(line: str, question: str) -> list[str]:
    """The identifiers of the kind the question asks for on a line: CVE ids ("Which CVE ..."), bug numbers
    ("Which bug ...": `Closes: #917065`)."""
    found = []
    for kind, pattern in _REFERENCES:
        if re.search(rf"\b{kind}", question, re.IGNORECASE):
            found += pattern.findall(line)
    return list(dict.fromkeys(found))


def exceptions(line: str) -> list[str]:
    """The exception names on a line (`CalledProcessError`, `ValueError`), in order."""
    return list(dict.fromkeys(_EXCEPTION.findall(line)))
