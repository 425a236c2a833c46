"""A made-up conversation of a real size, written as a transcript `loci memory import` reads.

Real conversations (LoCoMo, BEAM) may not be copied into the repository, so
the page's tests write one: `[8 May 2023] Caroline: ...` lines (the `text`
format of memory/imports/text.py), seeded so every run writes the same file.
It has what makes a real one hard to draw: about forty sessions on their own
days, several speakers (two or three a session), questions and short replies,
relative dates ("last Saturday", "yesterday") and many named people, places
and things, each named in a handful of turns across sessions, so the import
links turns within a session (`next`), to their session (`ground`) and across
sessions (`entity`).
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

__all__ = ["SESSIONS", "write_chat"]

SESSIONS = 42
SPEAKERS = ("Caroline", "Melanie", "Jon", "Gina", "Priya", "Tomasz")
PEOPLE = (
    "Aunt Rosa", "Dr Okafor", "Mr Lindqvist", "Simone", "Hiroshi", "Beatriz", "Coach Dlamini", "Marguerite",
    "Ravi", "Yusuf", "Elena Petrova", "Grandpa Ted", "Farah", "Oskar", "Ingrid", "Mateo", "Nadia", "Professor Chen",
)  # fmt: skip
PLACES = (
    "Lisbon", "the Riverside Library", "Harbor Street Garden", "Kyoto", "the Alder Lake cabin", "Camp Wildwood",
    "the Blue Door Cafe", "Marseille", "the Northgate Clinic", "Pine Ridge", "the Oakwood pottery studio",
    "Reykjavik", "the Saturday market", "Vancouver", "the Elm Street shelter", "Lake Bled", "the Crown Theatre",
    "Porto", "the Westfield climbing gym", "Cape Town",
)  # fmt: skip
THINGS = (
    "Moby Dick", "the Becoming memoir", "a Fender guitar", "the Nimbus road bike", "a Canon camera", "the Hobbit",
    "a Dutch oven", "the Pilates class", "a Kindle", "the Mandolin course", "a Bonsai tree", "the Lego castle",
    "the Sourdough starter", "a Polaroid", "the Tarot deck", "Sapiens",
)  # fmt: skip
PETS = ("Biscuit", "Luna", "Pepper", "Oliver", "Mochi", "Rufus", "Clementine", "Ziggy")
WHEN = ("yesterday", "last Saturday", "last week", "two days ago", "last month", "this morning", "last Friday")
OPENERS = (
    "Hey {other}! How have you been since we talked?",
    "Good to hear from you, {other}. What's new?",
    "Hi {other}, I have news!",
)
SAYINGS = (
    "I went to {place} {when} with {person}.",
    "{person} finally lent me {thing}, and I love it.",
    "We adopted a puppy named {pet} {when}; {person} helped us choose.",
    "I signed up for {thing} at {place}.",
    "{person} says the trip to {place} costs {euros} euros each.",
    "I started reading {thing} {when} because {person} would not stop talking about it.",
    "My cat {pet} knocked {thing} off the shelf {when}.",
    "I ran {km} kilometres along the river {when}, my best time yet.",
    "We're planning to visit {place} in {month}.",
    "{person} and I volunteered at {place} {when}.",
    "I finished painting the sunrise I saw at {place}.",
    "The doctor at {place} told me to rest my knee for {km} weeks.",
)
QUESTIONS = (
    "Did you ever go back to {place}?",
    "How is {pet} doing these days?",
    "What did {person} think of {thing}?",
    "When are you moving to {place}?",
    "Have you talked to {person} since the party?",
    "Was {place} as crowded as last time?",
)
REPLIES = (
    "Yes, twice!",
    "Not yet, maybe in {month}.",
    "Honestly, it was wonderful.",
    "{person} thinks so too.",
    "It rained the whole time, but {place} was still worth it.",
    "We'll see. {person} is still deciding.",
    "Ha, you remember everything.",
    "{pet} is great, a bit spoiled.",
)
MONTHS = ("January", "March", "June", "August", "October", "December")
FIRST = ("Amara", "Bruno", "Chiara", "Dmitri", "Esther", "Femi", "Greta", "Hamid", "Ilse", "Joaquin", "Keiko", "Lars")
LAST = ("Abbott", "Baptiste", "Castillo", "Duval", "Eriksen", "Fontaine", "Gallo", "Haddad", "Iverson", "Janssen")
TOWNS = ("Aldbury", "Brackwell", "Corrin", "Dunmore", "Eastleigh", "Farrow", "Glenholm", "Hartsfield", "Ivybridge")
SPOTS = ("Bakery", "Bookshop", "Museum", "Boathouse", "Observatory", "Community Hall", "Orchard")


def _rare(pick: random.Random, common: tuple[str, ...], made: tuple[str, ...], share: float = 0.75) -> str:
    """Mostly a name from a large made-up pool (named in a few turns), sometimes a common one (in many)."""
    return pick.choice(made) if pick.random() < share else pick.choice(common)


RARE_PEOPLE = tuple(f"{first} {last}" for first in FIRST for last in LAST)
RARE_PLACES = tuple(f"the {town} {spot}" for town in TOWNS for spot in SPOTS)


def _fill(template: str, pick: random.Random, other: str) -> str:
    return template.format(
        other=other,
        place=_rare(pick, PLACES, RARE_PLACES),
        person=_rare(pick, PEOPLE, RARE_PEOPLE),
        thing=pick.choice(THINGS),
        pet=pick.choice(PETS),
        when=pick.choice(WHEN),
        month=pick.choice(MONTHS),
        euros=pick.randrange(20, 900, 5),
        km=pick.randrange(2, 22),
    )


def _session(pick: random.Random, day: date) -> list[str]:
    speakers = pick.sample(SPEAKERS, pick.choice((2, 2, 3)))
    stamp = f"{day.day} {day.strftime('%B %Y')}"
    lines = [f"[{stamp}] {speakers[0]}: {_fill(pick.choice(OPENERS), pick, speakers[1])}"]
    asked = False
    for n in range(pick.randrange(21, 29)):
        speaker = speakers[(n + 1) % len(speakers)]
        template = pick.choice(REPLIES) if asked else pick.choice(QUESTIONS if pick.random() < 0.3 else SAYINGS)
        asked = template in QUESTIONS
        lines.append(f"[{stamp}] {speaker}: {_fill(template, pick, speakers[0])}")
    return lines


def write_chat(path: Path, sessions: int = SESSIONS, seed: int = 31) -> int:
    """Write the transcript to `path`; returns how many turns it holds."""
    pick = random.Random(seed)
    day = date(2023, 1, 8)
    lines: list[str] = []
    for _ in range(sessions):
        lines += _session(pick, day)
        day += timedelta(days=pick.randrange(3, 13))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)
