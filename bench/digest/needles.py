"""A needle set for long-document accuracy: facts planted at random depths in real text.

The haystack is varied real prose: the topics of the Python reference
manual that CPython ships (`pydoc_data.topics`, about 450,000 characters of
English on a hundred subjects), cut into paragraphs and shuffled with the
seed, cycled as often as a length needs. Where that module is missing, the
Zipf-distributed lines of `bench.context.corpus` stand in, and `source` says so.

Needles use invented names and numbers, so no question can be answered
from the haystack itself:

- single-hop: one fact, "The access code of the amber vault is 4821.",
  asked back directly;
- two-hop: two facts planted apart, "Velmora Quist keeps the key to the
  amber vault." and "The amber vault is in the city of Tarnhollow.", asked
  as "In which city is the room whose key Velmora Quist keeps?".

`write_haystack` streams the file a paragraph at a time, so a million
tokens cost no more memory than a thousand; a fact goes in when the running
token count passes its depth. `oracle` is a scripted model that reads
perfectly: it copies planted facts into the memory and answers a question
when its facts are in front of it, which checks the plumbing at any length.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loci.runtime.models.base import Reply, Request
from loci.runtime.models.scripted import ScriptedModel

__all__ = ["Needle", "haystack_source", "make_needles", "normalise", "oracle", "score", "write_haystack"]

ADJECTIVES = ["amber", "cobalt", "crimson", "silver", "jade", "ochre", "violet", "ashen", "golden", "scarlet"]
PLACES = ["vault", "archive", "cellar", "tower", "gallery", "observatory", "workshop", "chapel", "granary", "library"]
PARAGRAPH_CHARS = 600
SYLLABLES = ["vel", "mor", "quis", "tar", "hol", "bren", "dax", "ori", "ulm", "sev", "kor", "ith", "nal", "phe", "ros"]


@dataclass(frozen=True)
class Needle:
    kind: str  # "single" or "two-hop"
    facts: tuple[str, ...]
    question: str
    answer: str
    depths: tuple[float, ...] = field(default=())


def _name(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts)).capitalize()


def make_needles(n: int, seed: int = 11) -> list[Needle]:
    """`n` needles, alternating single-hop and two-hop, each at its own random depths."""
    rng = random.Random(seed)
    places = rng.sample([(a, p) for a in ADJECTIVES for p in PLACES], n)
    needles = []
    for index, (adjective, place) in enumerate(places):
        room = f"the {adjective} {place}"
        if index % 2 == 0:
            code = str(rng.randrange(1000, 10000))
            fact = f"The access code of {room} is {code}."
            needles.append(Needle("single", (fact,), f"What is the access code of {room}?", code, (rng.random(),)))
        else:
            person, city = f"{_name(rng, 2)} {_name(rng, 2)}", _name(rng, 3)
            facts = (f"{person} keeps the key to {room}.", f"{room.capitalize()} is in the city of {city}.")
            question = f"In which city is the room whose key {person} keeps?"
            needles.append(Needle("two-hop", facts, question, city, (rng.random(), rng.random())))
    return needles


def haystack_source() -> tuple[str, list[str]]:
    """`(name, paragraphs)`: the Python manual's topics, or synthetic lines without them."""
    try:
        from pydoc_data.topics import topics
    except ImportError:
        from loci.bench.context.corpus import Corpus

        return "loci.bench.context.corpus (synthetic)", Corpus().pool[:5_000]
    paragraphs = []
    for text in topics.values():
        for paragraph in re.split(r"\n\s*\n", text):
            if len(paragraph.strip()) > 80:
                paragraphs += _short(paragraph.strip())
    return "pydoc_data.topics (the Python reference manual)", paragraphs


def _short(paragraph: str) -> list[str]:
    """A paragraph in pieces of at most about PARAGRAPH_CHARS, cut at line ends: a length is met closely."""
    pieces, current = [], ""
    for line in paragraph.splitlines(keepends=True):
        if current and len(current) + len(line) > PARAGRAPH_CHARS:
            pieces.append(current.rstrip() + "\n\n")
            current = ""
        current += line
    return [*pieces, current.rstrip() + "\n\n"]


def _paragraphs(paragraphs: list[str], rng: random.Random) -> Iterator[str]:
    while True:
        order = list(paragraphs)
        rng.shuffle(order)
        yield from order


def write_haystack(path: Path, tokens: int, count: Callable[[str], int], needles: list[Needle], seed: int = 5) -> int:
    """Write about `tokens` tokens of real text with every needle's facts planted at its depths; the tokens written."""
    _, paragraphs = haystack_source()
    plants = sorted(
        (depth * tokens, fact) for needle in needles for depth, fact in zip(needle.depths, needle.facts, strict=True)
    )
    written = 0
    with path.open("w", encoding="utf-8") as out:
        for paragraph in _paragraphs(paragraphs, random.Random(seed)):
            while plants and plants[0][0] <= written:
                fact = plants.pop(0)[1] + "\n\n"
                out.write(fact)
                written += count(fact)
            if written >= tokens:
                break
            out.write(paragraph)
            written += count(paragraph)
        for _, fact in plants:
            out.write(fact + "\n\n")
            written += count(fact)
    return written


def normalise(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def oracle(needles: list[Needle], *, context_window: int = 8_192) -> ScriptedModel:
    """A scripted model that reads perfectly: memory keeps planted facts, answers need them in view."""
    facts = [fact for needle in needles for fact in needle.facts]
    by_question = {needle.question: needle for needle in needles}

    def reply(request: Request) -> str:
        text = request.messages[-1]["content"]
        if request.purpose == "memory":
            memory, _, chunk = text.partition("\n\nChunk ")
            memory = memory.split("Memory:\n", 1)[1]
            number = chunk.split(" ", 1)[0]
            found = [f"[{number}] {fact}" for fact in facts if fact in chunk]
            kept = [] if memory == "(empty)" else memory.splitlines()
            return "\n".join(kept + found)
        question = text.split("\n", 1)[0].removeprefix("Question: ")
        needle = by_question.get(question)
        if needle and all(fact in text for fact in needle.facts):
            return needle.answer
        return "The document does not say."

    return _Oracle([reply], context_window=context_window, name="scripted:oracle", repeat_last=True)


class _Oracle(ScriptedModel):
    """Keeps no log of its calls: at a million tokens the log would be what grows, not the runtime."""

    async def generate(self, request: Request) -> Reply:
        try:
            return await super().generate(request)
        finally:
            self.calls.clear()


def score(answer: str, expected: str) -> dict[str, Any]:
    got, want = normalise(answer), normalise(expected)
    return {"exact": got == want, "contains": bool(want) and f" {want} " in f" {got} "}
