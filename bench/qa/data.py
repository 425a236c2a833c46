"""Question sets for `loci bench qa`, generated from a seed: short documents and long real text.

- short: documents of a few lines to a few hundred tokens (a note, a price
  list, a recipe, a config file, a team list, ...), each with one question
  whose answer is a span of it. Some are padded with paragraphs of real text
  around the fact, so the set runs from four lines to a few hundred tokens.
- long: real English text far larger than a small model's window (the
  Python language reference that ships with CPython, `pydoc_data.topics`, so
  nothing is downloaded), with one fact planted per question at a random
  paragraph boundary.

Values (names, numbers, words) are drawn from the seed, so the answer is
never something a model could know without reading the document.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Question", "long_set", "real_text", "short_set"]

WORDS = [
    "marmalade",
    "juniper",
    "copperleaf",
    "saffron",
    "driftwood",
    "lanternfish",
    "quartzite",
    "thistle",
    "obsidian",
    "bramble",
]
NAMES = [
    "Ana Ruiz",
    "Tomas Berg",
    "Lena Park",
    "Ivo Marek",
    "Sofia Lind",
    "Omar Haddad",
    "Greta Voss",
    "Nils Okafor",
    "Mira Sato",
]
PLACES = ["Veloria", "Kestrel Bay", "Dunmore", "Ostrava Point", "Lindqvist", "Marrow Hill", "Calder Reach", "Penhallow"]
TEAMS = ["Falcon", "Heron", "Otter", "Lynx", "Badger", "Kestrel", "Marten", "Plover"]


@dataclass(frozen=True)
class Question:
    document: str
    question: str
    expected: str
    name: str


def _secret(r: random.Random) -> tuple[str, str, str]:
    word = r.choice(WORDS)
    return (
        f"Notes for the game night.\nBring snacks and a pen.\nThe secret word is {word}.\nDo not tell anyone.",
        "What is the secret word?",
        word,
    )


def _mooring(r: random.Random) -> tuple[str, str, str]:
    n = r.randrange(120, 990)
    text = (
        f"Harbour rules\n"
        f"Boats must be registered.\n"
        f"A mooring plot costs {n} crowns per season.\n"
        f"The gate closes at dusk."
    )
    return text, "How much does a mooring plot cost per season?", f"{n} crowns"


def _recipe(r: random.Random) -> tuple[str, str, str]:
    minutes = r.randrange(21, 59)
    text = (
        f"Apple cake\n"
        f"Ingredients: 3 eggs, 200 g flour, 150 g sugar, 4 apples.\n"
        f"Mix, pour into a tin and bake for {minutes} minutes at 180 degrees.\n"
        f"Serve warm."
    )
    return text, "How many minutes does the apple cake bake?", str(minutes)


def _config(r: random.Random) -> tuple[str, str, str]:
    port = r.randrange(2000, 9999)
    text = f"# server settings\nhost = 127.0.0.1\nport = {port}\nlog_level = info\nworkers = 4"
    return text, "Which port does the server listen on?", str(port)


def _team(r: random.Random) -> tuple[str, str, str]:
    team, lead, *others = r.sample(TEAMS, 1) + r.sample(NAMES, 3)
    text = (
        f"Project teams\n"
        f"Team {team} is led by {lead}.\n"
        f"Its members are {others[0]} and {others[1]}.\n"
        f"The team meets on Mondays."
    )
    return text, f"Who leads Team {team}?", lead


def _capital(r: random.Random) -> tuple[str, str, str]:
    country, city = r.sample(PLACES, 2)
    text = (
        f"Atlas of invented lands\n"
        f"{country} is a small island nation.\n"
        f"The capital of {country} is {city}.\n"
        f"Its flag is green and white."
    )
    return text, f"What is the capital of {country}?", city


def _room(r: random.Random) -> tuple[str, str, str]:
    room = f"{r.choice('ABCDE')}{r.randrange(100, 499)}"
    text = (
        f"Calendar\nThe quarterly review takes place on Thursday.\nIt is held in room {room}.\nCoffee is served at ten."
    )
    return text, "In which room is the quarterly review held?", room


def _warranty(r: random.Random) -> tuple[str, str, str]:
    months = r.randrange(13, 61)
    text = (
        f"Product sheet: the Kettle K2\n"
        f"Power: 2000 W. Capacity: 1.7 litres.\n"
        f"The warranty lasts {months} months from the date of purchase."
    )
    return text, "How many months does the warranty of the Kettle K2 last?", str(months)


def _pet(r: random.Random) -> tuple[str, str, str]:
    name = r.choice(["Biscuit", "Pepper", "Mochi", "Wafer", "Tansy", "Pickle", "Juno"])
    text = (
        f"Letter to the neighbours\n"
        f"We are away from Friday to Sunday.\n"
        f"Please feed our cat, whose name is {name}, twice a day.\n"
        f"The key is under the mat."
    )
    return text, "What is the name of the cat?", name


def _platform(r: random.Random) -> tuple[str, str, str]:
    city, platform = r.choice(PLACES), r.randrange(11, 29)
    text = f"Departures\nThe 7:15 train to {city} leaves from platform {platform}.\nTickets are sold in the hall."
    return text, f"From which platform does the train to {city} leave?", str(platform)


SHORT: list[Callable[[random.Random], tuple[str, str, str]]] = [
    _secret,
    _mooring,
    _recipe,
    _config,
    _team,
    _capital,
    _room,
    _warranty,
    _pet,
    _platform,
]


def real_text() -> list[str]:
    """Paragraphs of real English prose: the Python language reference shipped with CPython."""
    from pydoc_data.topics import topics

    text = "\n\n".join(topics[key] for key in sorted(topics))
    return [p.strip() for p in text.split("\n\n") if len(p.split()) >= 12]


def short_set(count: int, seed: int = 0) -> list[Question]:
    """`count` short documents with one question each; every third is padded with real paragraphs."""
    r = random.Random(seed)
    paragraphs = real_text()
    questions = []
    for i in range(count):
        make = SHORT[i % len(SHORT)]
        text, question, expected = make(r)
        if i % 3 == 2:  # a few hundred tokens: the fact between paragraphs of real text
            start = r.randrange(len(paragraphs) - 4)
            text = "\n\n".join([paragraphs[start], text, paragraphs[start + 1], paragraphs[start + 2]])
        questions.append(Question(text + "\n", question, expected, make.__name__.strip("_")))
    return questions


def long_set(count: int, words: int = 24_000, seed: int = 0) -> list[Question]:
    """`count` long documents of about `words` words of real text, one planted fact each."""
    r = random.Random(seed + 1)
    paragraphs = real_text()
    questions = []
    for i in range(count):
        make = SHORT[(i * 3 + 1) % len(SHORT)]
        _, question, expected = make(r)
        fact = _fact(make.__name__, question, expected)
        start = r.randrange(len(paragraphs) // 2)
        body, total = [], 0
        for paragraph in paragraphs[start:] + paragraphs[:start]:
            body.append(paragraph)
            total += len(paragraph.split())
            if total >= words:
                break
        body.insert(r.randrange(len(body) + 1), fact)
        questions.append(Question("\n\n".join(body) + "\n", question, expected, make.__name__.strip("_")))
    return questions


def _fact(kind: str, question: str, expected: str) -> str:
    """The one sentence that answers `question`, as planted in long text."""
    facts = {
        "_secret": f"The secret word is {expected}.",
        "_mooring": f"A mooring plot costs {expected} per season.",
        "_recipe": f"The apple cake bakes for {expected} minutes at 180 degrees.",
        "_config": f"The server listens on port {expected}.",
        "_team": f"{question.removeprefix('Who leads ').rstrip('?')} is led by {expected}.",
        "_capital": f"The capital of {question.removeprefix('What is the capital of ').rstrip('?')} is {expected}.",
        "_room": f"The quarterly review is held in room {expected}.",
        "_warranty": f"The warranty of the Kettle K2 lasts {expected} months.",
        "_pet": f"The name of the cat is {expected}.",
        "_platform": f"The train to {_destination(question)} leaves from platform {expected}.",
    }
    return facts[kind]


def _destination(question: str) -> str:
    return question.split(" to ")[-1].removesuffix(" leave?")
