"""A chat's thread: what its earlier turns asked and answered, so each turn answers its own question.

Five turns of `loci chat --file textwrap.py` showed two ways a chat loses
the thread. Turn 5, "What placeholder does shorten use?", was answered with
turn 1's answer, "The default width of TextWrapper is 70.", and shown as
done; and turn 4, "double it", recalled 70 but did not double it. So:

- `repeats`: an answer that says again what an earlier turn answered to a
  different question is not an answer to this one. The chat marks it
  `partial`, naming the turn it repeats; so is a sentence that states the
  same numbers as an earlier turn's sentence to a different question (the
  small model copies the frame of its last answer: "The default tabsize of
  TextWrapper is 70 characters." after "The default width of TextWrapper is
  70 characters."). An answer of fewer than `REPEAT_WORDS` words ("Yes.",
  "70") may be right twice and is not judged so;
- `task`: a short line (`BACK_WORDS` words at most) that refers back
  ("double it", "that function", "what about its default?") carries the previous exchange with it, as fields
  rendered once into the task the run reads: the previous question and its
  answer, so "it" resolves against the earlier turn and not against
  whatever the documents' best line is. A line that does not refer back is
  its own task, unchanged.
- `computed`: a follow-up that asks for arithmetic on the previous answer
  ("double it", "what is half of that?", "multiply it by 3", "add 10 to
  it") is worked out here, when that answer states one number: a model of
  135M parameters recalls the 70 and does not double it. The chat answers
  with the result, the number it came from and the turn that gave it.

The thread is the chat's log read back (`memory.records.chat`), so a
resumed chat keeps it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from loci.memory.text.tokens import tokens

__all__ = ["REPEAT_WORDS", "Exchange", "Thread", "refers_back"]

REPEAT_WORDS = 4
# A short line with one of these points back; a long one says what it is about itself.
_BACK = re.compile(r"\b(it|its|that|this|those|these|them|the same|double|triple|twice|half|again)\b", re.IGNORECASE)
BACK_WORDS = 10
_NUMBER = r"(\d+(?:\.\d+)?)"
# the arithmetic a follow-up asks of the previous answer's number: its pattern, the operation, and the operand
# when the words say it (else the pattern's number)
_ARITHMETIC: tuple[tuple[re.Pattern[str], str, float | None], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), symbol, operand)
    for pattern, symbol, operand in (
        (rf"\b(?:times|multiplied\s+by|multiply\s+(?:it|that|this)\s+by)\s+{_NUMBER}", "×", None),
        (rf"\b(?:divided\s+by|divide\s+(?:it|that|this)\s+by)\s+{_NUMBER}", "/", None),
        (rf"\b(?:plus|add)\s+{_NUMBER}", "+", None),
        (rf"\b(?:minus|subtract|take\s+away)\s+{_NUMBER}", "−", None),
        (r"\b(?:double|twice|two\s+times)\b", "×", 2.0),
        (r"\b(?:triple|thrice|three\s+times)\b", "×", 3.0),
        (r"\b(?:half|halve|halved)\b", "/", 2.0),
    )
)
_OPERATIONS: dict[str, Callable[[float, float], float]] = {
    "×": lambda x, n: x * n,
    "/": lambda x, n: x / n,
    "+": lambda x, n: x + n,
    "−": lambda x, n: x - n,
}
_STATED = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?![\w,])|(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\d)")


@dataclass(frozen=True)
class Exchange:
    """One turn of the chat: the question as the person wrote it, and the answer shown."""

    question: str
    answer: str


def refers_back(line: str) -> bool:
    """Whether `line` points at something said before ("it", "that function", "double it")."""
    return len(tokens(line)) <= BACK_WORDS and bool(_BACK.search(line))


def _flat(text: str) -> tuple[str, ...]:
    return tuple(tokens(text))


class Thread:
    """The exchanges of one chat, in order."""

    def __init__(self, exchanges: Iterable[Exchange] = ()) -> None:
        self.exchanges = list(exchanges)

    def task(self, line: str) -> str:
        """The task a line asks: itself, with the previous exchange when it refers back to it."""
        if not self.exchanges or not refers_back(line):
            return line
        last = self.exchanges[-1]
        said = " ".join(last.answer.split())
        return f'{line}\n\n(This follows the previous question, "{last.question.strip()}", answered: "{said}".)'

    def computed(self, line: str) -> str | None:
        """The answer to a follow-up that asks for arithmetic on the previous answer's number (`_ARITHMETIC`),
        with the number and the turn it came from; None for any other line, or when that answer states no
        number or several."""
        if not self.exchanges or not refers_back(line):
            return None
        stated = {float(n.replace(",", "")) for n in _STATED.findall(self.exchanges[-1].answer)}
        if len(stated) != 1:
            return None
        found = ((m, symbol, operand) for pattern, symbol, operand in _ARITHMETIC if (m := pattern.search(line)))
        if (asked := next(found, None)) is None:
            return None
        match, symbol, operand = asked
        value, by = stated.pop(), operand if operand is not None else float(match.group(1))
        if symbol == "/" and by == 0:
            return None
        result = _OPERATIONS[symbol](value, by)
        return f"{_shown(result)} ({_shown(value)} {symbol} {_shown(by)}, from turn {len(self.exchanges)}'s answer)"

    def repeats(self, line: str, answer: str) -> int | None:
        """The turn (1-based) whose answer `answer` says again to a different question, or None."""
        said = _flat(answer)
        if len(said) < REPEAT_WORDS:
            return None
        asked, stated = _flat(line), _numbers(answer, line)
        for number, earlier in enumerate(self.exchanges, 1):
            if _flat(earlier.question) == asked or len(_flat(earlier.answer)) < REPEAT_WORDS:
                continue
            if _flat(earlier.answer) == said or (stated and stated == _numbers(earlier.answer, earlier.question)):
                return number
        return None

    def add(self, line: str, answer: str) -> None:
        self.exchanges.append(Exchange(line, answer))


def _numbers(answer: str, question: str) -> frozenset[str]:
    """The numbers an answer states that its question does not."""
    return frozenset(_STATED.findall(answer)) - frozenset(_STATED.findall(question))


def _shown(number: float) -> str:
    """A number as a person writes it: `16` for 16.0, `0.5`, `2.75`."""
    return str(int(number)) if number.is_integer() else f"{number:.6g}"
