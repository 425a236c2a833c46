"""The form of an answer a question asks for: a person, a number, a year, an address, an e-mail address, an option.

"Who wrote ...?" is answered by a name, "How many ...?" by a number, "Where can I read about it
online?" by an address and "Which flag ...?" by an option; an answer without one does not answer,
however well its words stand on the lines shown. The small model restates such a question ("The
module that wraps and fills paragraphs of text"), copies a call off the line it found
(`s.decode(detect_encoding(s), 'surrogatepass')` for "Who wrote Python's JSON encoder?") or names the
constant instead of its value (`HTTP_PORT` for "On which port ..."). `missing_form` says which form is
missing, and `runtime.reading.values.not_the_value` makes such an answer `partial`.

Each form is asked for by a few plain patterns of the question, and an answer has it when it holds
one thing of that form that the question does not hold already: a capitalised name or an e-mail
address (not a sentence's opening word, nor a word after an article: "written by the Python team", nor
one the lines shown say in lower case: `Written on stream ...`, `Default`; in
an answer of at most three words, not one a lowercase word follows: `Object stack macros` names a thing),
a number (for a year, four digits), an address (`https://...`, `www.`, a domain), an option (`-S`, `--sort`). A
question that asks for none of these forms (what a section is titled, what a licence allows) is left to the other
checks.
"""

from __future__ import annotations

import re

from loci.memory.text import stem
from loci.memory.text.repeats import flat
from loci.runtime.reading.answers import OPTION
from loci.runtime.reading.fields import ASKS_OPTION

__all__ = ["asked_form", "common_words", "missing_form"]

# what a question asks the number of
_QUANTITY = r"(max|maximum|min|minimum|number|size|length|port|limit|width|count|year)s?"
# "how do I make uniq show how many times ...?" asks for a way to do it, not for a number
_WAY = re.compile(r"\s*how\s+(do|does|can|could|would|should|to)\b", re.IGNORECASE)
_FORMS = (
    ("number", re.compile(r".*\bhow\s+(many|much)\b", re.IGNORECASE)),  # "how many lines, without options?"
    ("option", re.compile(rf".*{ASKS_OPTION.pattern}", re.IGNORECASE)),
    (
        "address",
        re.compile(
            r".*(\b(url|urls|website|web\s+site|home\s*page|web\s+page|link)\b"
            r"|\bwhere\b.*\b(online|repo|repository|web|download\w*|source\s+code)\b)",
            re.IGNORECASE,
        ),
    ),
    # "from which year does calendar count timestamps?": a year, not the `12` of `return year-1, 12`
    ("year", re.compile(r".*\b(what|which)\b(\W+\w+){0,3}?\W+year\b", re.IGNORECASE)),
    (
        "number",
        re.compile(
            r"\s*how\s+(many|much|long|big|large|old|wide)\b"
            # "what is tail's default line count?", "from which year ...", "What is the maximum size ..."
            rf"|.*\b(what|which)\b(\W+\w+){{0,5}}?\W+{_QUANTITY}\b"
            # no question word: "max line size for encoded base64 lines?"
            rf"|(?!.*\b(what|which|who|whom|whose|where|when|why|how)\b).*\b{_QUANTITY}\b",
            re.IGNORECASE,
        ),
    ),
    # not the `email` package ("What is MAXLINELEN in email.header?")
    ("email", re.compile(r".*\b(e-?mail(ing)?|mail\s+address|mailing\s+lists?)\b(?!\.\w)", re.IGNORECASE)),
    # "Who wrote ...", "Who is the author of ...", not "Who is Caroline?" (a description answers that)
    ("person", re.compile(r"\s*(whom|whose\b|who\b(?!\s+(is|was|are|were)\s+(?!the\b|a\b|an\b)))", re.IGNORECASE)),
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
_ADDRESS = re.compile(r"://|\bwww\.|\b[\w-]+\.(org|com|net|io|edu|gov|info|de|uk|fr)\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")
_YEAR = re.compile(r"(?<!\d)[12]\d{3}(?!\d)")
_NAME = re.compile(r"(?<![\w'])[A-Z][a-z]+(?:[-'][A-Za-z]+)?|[\w.+-]+@[\w-]+\.[\w.]+")
_LOWER = re.compile(r"(?<![\w'@.-])[a-z][a-z]+(?![\w@-])")  # a word said in lower case, not part of an address
_ARTICLE = re.compile(r"\b(the|a|an)\s+$", re.IGNORECASE)  # "the Python team": a thing, not a person's name
# words that join the parts of a name: "Software in the Public Interest", "University of Toronto", "Ludwig van ..."
_JOINERS = {"of", "in", "the", "and", "for", "de", "da", "di", "du", "van", "von", "der", "den", "le", "la", "bin"}
_SHORT = 3  # an answer of at most this many words is a name or is not one: no sentence holds a name there
_OPENERS = {"The", "A", "An", "It", "Its", "This", "That", "These", "Those", "He", "She", "They", "Yes", "No"}


def asked_form(question: str) -> str | None:
    """The form `question` asks its answer to have: "option", "email", "address", "year", "number", "person", or
    None."""
    form = next((form for form, asks in _FORMS if asks.match(question)), None)
    return None if form == "number" and _WAY.match(question) else form


def missing_form(answer: str, question: str, *, common: frozenset[str] = frozenset()) -> str | None:
    """The form the question asks for that `answer` lacks (beyond what the question says itself), or None.
    `common`: the stems of the words the lines shown say in lower case (`common_words`); a capitalised word
    with one of them is a word of the text, not a person's name (`Written on stream ...`, `Default`)."""
    form = asked_form(question)
    if form == "option":
        has = bool(OPTION.search(answer))
    elif form == "email":
        has = bool(_EMAIL.search(answer))
    elif form == "address":
        has = bool(_ADDRESS.search(answer))
    elif form == "number":
        has = bool(set(_NUMBER.findall(answer)) - set(_NUMBER.findall(question)))
    elif form == "year":
        has = bool(set(_YEAR.findall(answer)) - set(_YEAR.findall(question)))
    elif form == "person":
        asked = set(flat(question).split())
        has = any(
            name.group(0) not in _OPENERS
            and name.group(0).casefold() not in asked
            and not _ARTICLE.search(answer[: name.start()])
            and not _thing(answer, name)
            and ("@" in name.group(0) or stem(name.group(0).casefold()) not in common)
            for name in _NAME.finditer(answer)
        )
    else:
        return None
    return None if has else form


def common_words(text: str) -> frozenset[str]:
    """The stems of the words `text` says in lower case (`missing_form`'s `common`)."""
    return frozenset(stem(word) for word in _LOWER.findall(text))


def _thing(answer: str, name: re.Match[str]) -> bool:
    """Whether, in a short answer, the capitalised word `name` begins the name of a thing: a lowercase word that
    joins no name follows it (`Object stack macros`, not `Software in the Public Interest` nor `Melanie's kids`)."""
    if len(answer.split()) > _SHORT or name.group(0).endswith(("'s", "s'")):
        return False
    following = answer[name.end() :].split()
    word = following[0].strip(".,;:") if following else ""
    return bool(word) and word[0].islower() and word not in _JOINERS
