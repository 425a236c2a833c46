"""A chat's thread: what its earlier turns asked and answered, so each turn answers its own question.

Five turns of `loci chat --file textwrap.py` showed two ways a chat loses
the thread. Turn 5, "What placeholder does shorten use?", was answered with
turn 1's answer, "The default width of TextWrapper is 70.", and shown as
done; and turn 4, "double it", recalled 70 but did not double it. So:

- `repeats`: an answer that says again what an earlier turn answered to a
  different question is not an answer to this one. The chat marks it
  `partial`, naming the turn it repeats. An answer of fewer than
  `REPEAT_WORDS` words ("Yes.", "70") may be right twice and is not
  judged so;
- `task`: a short line (`BACK_WORDS` words at most) that refers back
  ("double it", "that function", "what about its default?") carries the previous exchange with it, as fields
  rendered once into the task the run reads: the previous question and its
  answer, so "it" resolves against the earlier turn and not against
  whatever the documents' best line is. A line that does not refer back is
  its own task, unchanged.

The thread is the chat's log read back (`memory.records.chat`), so a
resumed chat keeps it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from loci.memory.text.tokens import tokens

__all__ = ["REPEAT_WORDS", "Exchange", "Thread", "refers_back"]

REPEAT_WORDS = 4
# A short line with one of these points back; a long one says what it is about itself.
_BACK = re.compile(r"\b(it|its|that|this|those|these|them|the same|double|triple|twice|half|again)\b", re.IGNORECASE)
BACK_WORDS = 10


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

    def repeats(self, line: str, answer: str) -> int | None:
        """The turn (1-based) whose answer `answer` says again to a different question, or None."""
        said = _flat(answer)
        if len(said) < REPEAT_WORDS:
            return None
        asked = _flat(line)
        for number, earlier in enumerate(self.exchanges, 1):
            if _flat(earlier.answer) == said and _flat(earlier.question) != asked:
                return number
        return None

    def add(self, line: str, answer: str) -> None:
        self.exchanges.append(Exchange(line, answer))
