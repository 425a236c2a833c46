"""Other sessions at the top: a turn its session's episode lifted yields a first place to another session's match,
and to a fuller match of the person's own.

A session is an episodic node linked to each of its turns
(memory/graph/conversation.py). When its text matches a question, it spreads
to all of its turns at once, and in a long session (a chat of hundreds of
messages about one project) it lifts a run of them to the context cap
(`Weights.context`): the first places fill with one session, and a better
direct match said in another session falls below them. Questions that need
turns from several sessions (what changed across them, the order things came
up in, a count added up over time) lose exactly that match.

So among the first `PLACES` places (with the candidates from the first `WINDOW`, as the restatement
step reads them, memory/graph/newer.py): when the next node belongs to a session
already placed above it and its strongest lift came from that session's episode,
the best direct match (by its own words, `score - graph`) of a session not yet
placed takes the place instead, if that match ranks above it by its own words
too: the graph's lift of a turn over a better match is what yields, nothing
else does. The node that moves gets a `session` part that lifts it just above
the one it passed, so the parts still sum to the score and the scores fall
down the list. Nodes with no session (a remembered fact) are never moved nor
moved past. A lift by the turns' own links (the reply to a matched question,
the turn naming the same thing) keeps its place: that is what the graph wins
on short sessions (LoCoMo), and passing it costs them. So does a lift by a
run's episode (which has no session): a turn that helped a run is lifted by
experience, not by the company it keeps (counted as a session's lift, it cost
the evolving arm of `bench evolution --data` much of its gain).

Deciding the first 8 places or more instead of 6 moved a third session's match
over a first-session turn at eighth place and pushed a temporal question's
evidence out of the first ten; 5 places left event ordering below the no-graph
ablation.

A turn its session lifted also yields, in the same first places, to a fuller match of the person's
own (`fuller_first`, after the step above): a direct match below it that ranks above it by its own
words and holds more of the query's terms (each counted once, by its first letters as
memory/graph/newer.py reads them). The session's lift says only that a turn was said in a session
that matches the question, which is as true of the fuller match; and a long message, whose link to
its session is weak, loses that lift to short turns that each say one of the terms. The match that
passes must count whole: the person's own turn, or any turn when the question asks what the
assistant said (an assistant's elaboration holds more terms because it restates them at length; let
it pass too, and a short statement of the person's, the evidence, fell below the assistant's long
reply). The node that moves gets a `fuller` part that lifts it just above the one it passed. Over
more first places than 6, recall at ten fell. What each step measured against the ranking without
it: docs/benchmarks.md, "Figures behind the code's choices". Standard library only: the hook process ranks through this.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from loci.memory.graph.newer import WINDOW, Scored

__all__ = ["PLACES", "fuller_first", "sessions_first"]

PLACES = 6


def sessions_first(scored: list[Scored], session_of: Mapping[int, int], lifted: Collection[int]) -> list[Scored]:
    """`scored` (best first) with its first `PLACES` places opened to other sessions' matches.

    `session_of` maps a node to its session (the session's episode); `lifted` holds the nodes whose strongest
    lift came from their session's episode."""
    head, rest = list(scored[:WINDOW]), scored[WINDOW:]
    placed: list[Scored] = []
    held: set[int] = set()
    while head and len(placed) < PLACES:
        first = head[0]
        mine = session_of.get(first[1])
        pick = first
        if mine in held and first[1] in lifted:
            others = [
                item
                for item in head[1:]
                if (theirs := session_of.get(item[1])) is not None
                and theirs not in held
                and _matches_above(item, first)
            ]
            if others:
                pick = _moved_up(first, others, "session")
        head.remove(first if pick is first else next(item for item in head if item[1] == pick[1]))
        placed.append(pick)
        if (theirs := session_of.get(pick[1])) is not None:
            held.add(theirs)
    return placed + head + list(rest)


def fuller_first(
    scored: list[Scored], lifted: Collection[int], held: Mapping[int, int], whole: Collection[int]
) -> list[Scored]:
    """`scored` (best first) with a lifted turn of its first `PLACES` places yielding to a fuller match.

    `lifted` holds the nodes whose strongest lift came from their session's episode, `held` how many of the
    query's terms each node of the first `WINDOW` holds, and `whole` the nodes whose match counts whole (the
    person's own turns, or every turn when the question asks what the assistant said)."""
    head, rest = list(scored[:WINDOW]), scored[WINDOW:]
    placed: list[Scored] = []
    while head and len(placed) < PLACES:
        first = head[0]
        pick = first
        if first[1] in lifted and first[1] in held:
            fuller = [
                item
                for item in head[1:]
                if item[1] in whole and held.get(item[1], 0) > held[first[1]] and _matches_above(item, first)
            ]
            if fuller:
                pick = _moved_up(first, fuller, "fuller")
        head.remove(first if pick is first else next(item for item in head if item[1] == pick[1]))
        placed.append(pick)
    return placed + head + list(rest)


def _matches_above(item: Scored, first: Scored) -> bool:
    """Whether `item` matches the query by its own words, and by them alone scores above `first`."""
    return item[2].get("lexical", 0.0) + item[2].get("vector", 0.0) > 0 and _direct(item) > _direct(first)


def _moved_up(first: Scored, candidates: list[Scored], part: str) -> Scored:
    """The best of `candidates` by its own words, scored just above `first`: the difference is its `part`."""
    best = max(candidates, key=_direct)
    lift = round(first[0] - best[0] + 0.0001, 4)
    return (round(first[0] + 0.0001, 4), best[1], {**best[2], part: lift})


def _direct(item: Scored) -> float:
    """A node's score by its own words: what it would score with no graph part."""
    return item[0] - item[2].get("graph", 0.0)
