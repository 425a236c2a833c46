"""The synthetic task world of `loci bench evolution`, and the fixed policy that acts in it.

No language model is involved: the world is made of invented words, and a
deterministic policy acts only on what memory returns.

The world (all drawn from one seed):
- a tool catalogue of `TOOLS`, each with its argument shape;
- task types, each a recurring multi-step procedure (3 or 4 tools in order)
  and two words that name it in every task of the type;
- families, each a subject of one type with one attribute; answering needs
  two facts, `A` ("<subject> maps to <link>") and `B` ("<link> <attribute>
  <value>"). The task names the subject and the attribute but never the
  link, so `B` shares only the attribute word with the task, as do the `B`
  facts of every other family with that attribute: lexically it is one
  look-alike among many;
- look-alike facts that interfere: each subject also has stale links
  ("<subject> maps to <other link>"), lexically as good a match as `A`,
  and some distractors are stored twice, near-identically.

A task is "<type words> the <attribute> of <subject>". The policy:
1. asks memory for the best live procedure for the task (`memory_procedures`)
   and recalls the top `k` facts (`Recall`, the same recall in both arms);
2. walks the type's stages: a stage is done when its tool is called; it
   first tries the procedure's tool for that stage (if it has one), then the
   tools in an order drawn for that task (the same in both arms). A wrong
   tool is a failed step (an error result);
3. succeeds when every stage is done within `max_steps` and both facts were
   among the recalled ones; the outcome reported to memory is then flipped
   with probability `noise`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from loci.memory.evolution.episodes import Step

__all__ = ["TOOLS", "Attempt", "Family", "Task", "TaskType", "World"]

TOOLS: dict[str, dict[str, object]] = {
    "search": {"query": "q"},
    "open": {"id": "doc:1"},
    "read": {"id": "doc:1", "start": 1},
    "filter": {"field": "f", "value": "v"},
    "join": {"left": "a", "right": "b"},
    "compute": {"expression": "x"},
    "check": {"claim": "c"},
    "write": {"text": "t"},
}
SYLLABLES = "ka lo mi ner to va shi ru den pol ar vik sel mon tri bel gor fen lux dra zu qe"


@dataclass(frozen=True)
class TaskType:
    words: tuple[str, str]
    steps: tuple[str, ...]


@dataclass(frozen=True)
class Family:
    kind: TaskType
    subject: str
    attribute: str
    a: str
    b: str


@dataclass(frozen=True)
class Task:
    family: Family
    text: str


@dataclass
class Attempt:
    steps: list[Step]
    solved: bool
    outcome: float
    facts_right: bool = False
    stages_done: bool = False


class World:
    def __init__(self, seed: int, *, types: int = 8, families: int = 24, attributes: int = 12, stale: int = 1) -> None:
        self.rng = random.Random(seed)
        words = self._words(types * 2 + families * 6 + attributes + 8)
        take = iter(words)
        self.types = [
            TaskType((next(take), next(take)), tuple(self.rng.sample(list(TOOLS), self.rng.choice((3, 4)))))
            for _ in range(types)
        ]
        attrs = [next(take) for _ in range(attributes)]
        self.families = []
        self.distractors: list[str] = []
        for i in range(families):
            subject, link, value = next(take), next(take), next(take)
            attr = attrs[i % attributes]
            fam = Family(self.types[i % types], subject, attr, f"{subject} maps to {link}", f"{link} {attr} {value}")
            self.families.append(fam)
            for _ in range(stale):
                old = f"{subject} maps to {next(take)}"
                self.distractors.append(old)
                if self.rng.random() < 0.5:
                    self.distractors.append(f"{old} .")  # the same stale fact, stored twice
        self.tool_order = list(TOOLS)
        self.rng.shuffle(self.tool_order)

    def _words(self, count: int) -> list[str]:
        found: set[str] = set()
        while len(found) < count:
            found.add("".join(self.rng.choice(SYLLABLES.split()) for _ in range(3)))
        return sorted(found)

    def facts(self) -> list[str]:
        """Every fact, in a shuffled order (ties in ranking follow insertion order; no side gets them)."""
        found = [text for fam in self.families for text in (fam.a, fam.b)] + self.distractors
        random.Random(len(found)).shuffle(found)
        return found

    def tasks(self, count: int, seed: int) -> list[Task]:
        rng = random.Random(seed)
        out = []
        for _ in range(count):
            fam = rng.choice(self.families)
            out.append(Task(fam, f"{fam.kind.words[0]} {fam.kind.words[1]} the {fam.attribute} of {fam.subject}"))
        return out

    def attempt(
        self,
        task: Task,
        plan: list[str],
        ranked: list[tuple[int, str, float]],
        *,
        extra: tuple[int, ...] = (),
        max_steps: int,
        noise: float,
        rng: random.Random,
        order: list[str] | None = None,
    ) -> Attempt:
        """Answer with the best recalled fact about the subject and the best about the attribute, "best"
        being the highest `ranked[i][2]` (recall score plus measured success), ties kept in recall order;
        walk the task's stages following `plan` where it has a step, else trying tools in `order`.
        `extra` are further memory ids used (a procedure)."""
        fam = task.family
        abouts = [(i, t, m) for i, t, m in ranked if fam.subject in t.split()]
        values = [(i, t, m) for i, t, m in ranked if fam.attribute in t.split() and fam.subject not in t.split()]
        about = max(abouts, key=lambda x: x[2], default=None)
        value = max(values, key=lambda x: x[2], default=None)
        picked = tuple(x[0] for x in (about, value) if x is not None)
        steps = [
            Step("memory_recall", {"query": task.text}, recalled=tuple(x[0] for x in ranked), used=(*picked, *extra))
        ]
        stages_done = 0
        for stage, tool in enumerate(fam.kind.steps):
            tries = ([plan[stage]] if stage < len(plan) else []) + (order or self.tool_order)
            for choice in dict.fromkeys(tries):
                if len(steps) >= max_steps:
                    break
                steps.append(Step(choice, dict(TOOLS.get(choice, {})), ok=choice == tool))
                if choice == tool:
                    stages_done += 1
                    break
            if stages_done <= stage:
                break
        right = about is not None and value is not None and _same(about[1], fam.a) and _same(value[1], fam.b)
        walked = stages_done == len(fam.kind.steps)
        flipped = rng.random() < noise
        return Attempt(steps, walked and right, float((walked and right) != flipped), right, walked)


def _same(text: str, fact: str) -> bool:
    """A fact or its near-identical copy."""
    return " ".join(text.split()).rstrip(" .") == fact
