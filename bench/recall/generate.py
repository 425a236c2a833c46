"""Write `bench/data/recall_generated.json`: a LoCoMo-format set that asks what agents ask of memory.

`python -m loci.bench.recall.generate [--out FILE] [--seed N]` is deterministic:
the same seed writes the same file. Each conversation is two people talking
over eight sessions a week or two apart, mostly small talk (drawn from a pool
of lines, so the right turn must be found among many), with facts planted in
it. Every question names its evidence turns (dia_ids) and one of four
categories:

- `paraphrase`: the question uses other words than the turn ("What pet did
  Maya get?" for "we brought home a little greyhound");
- `context`: the answer is the reply to a turn that matches the question
  ("Did you pick a name?" / "Pepper!"): the words are in one turn, the
  evidence in its neighbour;
- `multi-session`: the fact is spread over two sessions weeks apart, and
  both turns are evidence;
- `temporal`: the turn says when relative to the session ("last Saturday"),
  and the question asks about the resolved date ("on 6 May 2023") or asks
  when.

The templates below are written for this file, independently of any real
benchmark's questions.
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import date, timedelta
from pathlib import Path
from typing import Any

__all__ = ["OUT", "generate", "main"]

OUT = Path(__file__).parents[1] / "data" / "recall_generated.json"
SESSIONS = 8
PAIRS = [("Maya", "Leo"), ("Priya", "Tom"), ("Hana", "Omar")]
SMALL_TALK = [
    "Hey! How have you been?",
    "Pretty good, busy week though.",
    "Same here, work has been a lot.",
    "That sounds nice.",
    "Ha, I know what you mean.",
    "Oh wow, really?",
    "Tell me more!",
    "I hope things calm down soon.",
    "Thanks, that means a lot.",
    "Anyway, what's new with you?",
    "Not much, just trying to rest.",
    "The weather has been strange lately.",
    "I slept badly this week.",
    "We should catch up more often.",
    "Totally agree.",
    "Good luck with everything!",
    "Talk soon!",
    "I've been cooking more at home.",
    "My neighbour is renovating, so it's noisy.",
    "Coffee helps, honestly.",
    "That's so true.",
    "I'm glad to hear it.",
    "It's been a long day.",
    "Any plans for the weekend?",
    "Maybe just relaxing.",
    "Haha, fair enough.",
    "Take care of yourself.",
    "I read a good article today.",
]
# (statement, question, answer): the statement says it one way, the question asks another.
PARAPHRASE = [
    ("We finally brought home a little greyhound from the shelter!", "What did {a} adopt from the shelter?",
     "a greyhound"),
    ("I've been going to the climbing gym three evenings a week.", "How often does {a} go to the gym?",
     "three evenings a week"),
    ("My sister just had twins, so I'm an aunt twice over now.", "What happened in {a}'s family?", "twin nieces"),
    ("I handed in my notice at the bank, starting at a startup next month.", "Did {a} change jobs?", "yes"),
    ("We're redoing the kitchen, new cabinets and everything.", "What is {a} renovating?", "the kitchen"),
    ("I signed up for evening classes in Japanese.", "Which language is {a} studying?", "Japanese"),
]  # fmt: skip
CONTEXT = [
    ("Did you ever pick a name for the kitten?", "Yes! We went with Biscuit.", "What did {b} name the cat?", "Biscuit"),
    ("Where are you going on your honeymoon?", "Lisbon, then the Azores.", "Where is {b}'s honeymoon?", "Lisbon"),
    ("What did the doctor say about your knee?", "Torn ligament, six weeks of rest.",
     "What did the doctor tell {b} about the knee?", "a torn ligament"),
    ("Which band was playing at the festival?", "The Lumineers, they were amazing.",
     "Which band did {b} see at the festival?", "The Lumineers"),
]  # fmt: skip
MULTI = [
    ("I started learning the cello, it's so hard.", "My cello recital went better than I feared!",
     "What instrument does {a} play, and did {a} perform?", "cello; a recital"),
    ("I'm training for a half marathon in the autumn.", "I finished the half marathon in under two hours!",
     "How did {a}'s race training turn out?", "finished the half marathon under two hours"),
    ("We planted tomatoes and basil on the balcony.", "The balcony tomatoes are finally red.",
     "What is {a} growing at home, and how is it going?", "tomatoes and basil; ripe now"),
]  # fmt: skip
TEMPORAL = [
    ("I ran my first 10k {when}!", "ran a 10k"),
    ("We went to my cousin's wedding {when}.", "went to a cousin's wedding"),
    ("I passed my driving test {when}, finally.", "passed a driving test"),
    ("My parents visited {when}, it was lovely.", "had a visit from parents"),
]
WHEN = [("yesterday", 1), ("last Saturday", None), ("two days ago", 2)]


def generate(seed: int = 7) -> list[dict[str, Any]]:
    """The samples, each a LoCoMo-format conversation with its questions."""
    rng = random.Random(seed)
    return [_sample(rng, index, a, b) for index, (a, b) in enumerate(PAIRS)]


def _sample(rng: random.Random, index: int, a: str, b: str) -> dict[str, Any]:
    start = date(2023, 3, 6) + timedelta(days=17 * index)
    days = [start + timedelta(days=sum(rng.choice((7, 10, 14)) for _ in range(s))) for s in range(SESSIONS)]
    sessions: list[list[tuple[str, str]]] = [[] for _ in range(SESSIONS)]
    for number in range(SESSIONS):
        for _ in range(rng.randint(10, 14)):
            sessions[number].append((rng.choice((a, b)), rng.choice(SMALL_TALK)))
    plants: list[tuple[int, list[tuple[str, str]], dict[str, Any]]] = []
    for statement, question, answer in PARAPHRASE:
        plants.append((rng.randrange(SESSIONS), [(a, statement)], _qa(question, answer, "paraphrase", a, b, [0])))
    for ask, reply, question, answer in CONTEXT:
        plants.append((rng.randrange(SESSIONS), [(a, ask), (b, reply)], _qa(question, answer, "context", a, b, [1])))
    for first, second, question, answer in MULTI:
        early = rng.randrange(SESSIONS - 3)
        plants.append((early, [(a, first)], _qa(question, answer, "multi-session", a, b, [0], group=question)))
        plants.append((early + 3, [(a, second)], {"group": question}))
    for text, did in TEMPORAL:
        number = rng.randrange(SESSIONS)
        phrase, back = rng.choice(WHEN)
        back = back if back is not None else (days[number].weekday() - 5 - 1) % 7 + 1
        happened = days[number] - timedelta(days=back)
        spoken = f"{happened.day} {happened:%B %Y}"
        question = rng.choice((f"What did {{a}} do on {spoken}?", f"When did {{a}} say they {did}?"))
        plants.append((number, [(a, text.format(when=phrase))], _qa(question, spoken, "temporal", a, b, [0])))
    return _assemble(rng, index, a, b, days, sessions, plants)


def _qa(question: str, answer: str, category: str, a: str, b: str, at: list[int], group: str = "") -> dict[str, Any]:
    return {"question": question.format(a=a, b=b), "answer": answer, "category": category, "at": at, "group": group}


def _assemble(
    rng: random.Random,
    index: int,
    a: str,
    b: str,
    days: list[date],
    sessions: list[list[tuple[str, str]]],
    plants: list[tuple[int, list[tuple[str, str]], dict[str, Any]]],
) -> dict[str, Any]:
    """Insert the planted turns into their sessions, number every turn, and point the questions at them."""
    marks: list[list[tuple[str, str, int | None]]] = [[(s, t, None) for s, t in turns] for turns in sessions]
    for plant_id, (number, turns, _) in enumerate(plants):
        spot = rng.randint(1, len(marks[number]))
        marks[number][spot:spot] = [(speaker, text, plant_id) for speaker, text in turns]
    conversation: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    ids: dict[int, list[str]] = {}
    for number, turns in enumerate(marks, 1):
        conversation[f"session_{number}_date_time"] = (
            f"{number}:30 pm on {days[number - 1].day} {days[number - 1]:%B, %Y}"
        )
        conversation[f"session_{number}"] = []
        for position, (speaker, text, plant_id) in enumerate(turns, 1):
            dia = f"D{number}:{position}"
            conversation[f"session_{number}"].append({"speaker": speaker, "dia_id": dia, "text": text})
            if plant_id is not None:
                ids.setdefault(plant_id, []).append(dia)
    groups: dict[str, list[str]] = {}
    for plant_id, (_, _, info) in enumerate(plants):
        if info.get("group"):
            groups.setdefault(info["group"], []).extend(ids[plant_id])
    qa = []
    for plant_id, (_, _, info) in enumerate(plants):
        if "question" not in info:
            continue
        evidence = groups[info["group"]] if info["group"] else [ids[plant_id][i] for i in info["at"]]
        qa.append(
            {"question": info["question"], "answer": info["answer"], "evidence": evidence, "category": info["category"]}
        )
    return {"sample_id": f"generated-{index}", "conversation": conversation, "qa": qa}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m loci.bench.recall.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    args.out.write_text(json.dumps(generate(args.seed), indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
