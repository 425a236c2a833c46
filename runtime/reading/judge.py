"""The one check of an answer: may it say `done`, on the lines it was shown?

`judge(answer, shown)` is pure: no model call, nothing read from a store,
nothing changed. `Shown` carries the fields the check reads, filled where
the prompt was built (`runtime.prompt.regions.Regions.judged`): the lines
shown, typed (`runtime.prompt.shown.Lines`: each document line its
document, number and text), the task with the notes recalled for it, and
the question as lines are ranked for it. The verdict is `done`, or
`partial` with its reason and the claims no line holds:

- a claim of the answer (a name, number, identifier, option or quoted
  phrase) on no line about the question: not grounded
  (`runtime.reading.answers.ungrounded`, the one rule; a line the answer
  was read off as a span, `Shown.chosen`, is about it);
- a number a later line about the question changes
  (`runtime.reading.values.superseded`);
- not the value a shown line assigns to the name asked about, nor the
  title of the section asked, nor an exception or the form the question
  asks for (`runtime.reading.values.not_the_value`).

`loci run` and `loci chat` (`runtime.loop.decide`: it asks the model,
retries with the reason, and builds the answer's action) and `loci digest`
(`runtime.digest.verdict`: its own checks of the evidence, then this one,
without the value checks, for its evidence is plain text read back from the
store, not lines shown) all decide with it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from loci.runtime.prompt.shown import Lines, ShownLine
from loci.runtime.reading.answers import ungrounded
from loci.runtime.reading.values import not_the_value, superseded

__all__ = ["DONE", "PARTIAL", "Shown", "Verdict", "judge"]

DONE = "done"
PARTIAL = "partial"


@dataclass(frozen=True)
class Shown:
    """What an answer is judged on, each part a field."""

    lines: Lines  # the lines shown to the model
    task: str  # the question with the notes recalled for it: what it says needs no line
    ranked: str = ""  # the task as lines are ranked for it (without the words that name its documents)
    asked: str = ""  # the question alone, as lines are ranked for it: the name whose value it asks
    cited: tuple[ShownLine, ...] = ()  # lines the answer cites that are no longer shown (read an earlier turn)
    values: bool = True  # whether the value checks apply (`runtime.reading.values`)
    # the lines the runtime read the answer off (a span's line, `runtime.reading.spans`): about the question by
    # the rule that chose them (the first person a file names, a changelog entry's sign-off, a field's value)
    chosen: tuple[ShownLine, ...] = ()

    def citing(self, lines: tuple[ShownLine, ...]) -> Shown:
        """The same, with `lines` the answer cites beside those shown: its claims may stand on them."""
        return replace(self, cited=lines)


@dataclass(frozen=True)
class Verdict:
    """`done`, or `partial` with the reason (one line) and the claims no line holds."""

    status: str
    reason: str | None = None
    missing: tuple[str, ...] = ()

    @property
    def done(self) -> bool:
        return self.status == DONE


def judge(answer: str, shown: Shown) -> Verdict:
    """Whether `answer` may say `done` on what was `shown`; see the module docstring."""
    lines = Lines.of(shown.lines, Lines(shown.cited)) if shown.cited else shown.lines
    chosen = [line.text for line in shown.chosen]
    if missing := ungrounded(answer, lines, shown.task, ranked=shown.ranked or None, chosen=chosen):
        named = ", ".join(repr(claim) for claim in missing[:4])
        return Verdict(PARTIAL, f"not grounded: the answer says {named}, which no line shown says", tuple(missing))
    if not shown.values:
        return Verdict(DONE)
    if changed := superseded(answer, shown.lines, shown.ranked):
        return Verdict(
            PARTIAL, f"not grounded: the answer says {changed[0]!r}, which a later line about the task changes"
        )
    if other := not_the_value(answer, shown.lines, shown.asked, whole=shown.task):
        return Verdict(PARTIAL, other)
    return Verdict(DONE)
