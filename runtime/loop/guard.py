"""No loops: an identical tool call is answered from the run's memory, not dispatched again.

A small model that does not know what to do next tends to repeat its last
call, word for word. `RepeatGuard` remembers each call of the run (tool and
arguments, compared as canonical JSON) with the turn and the stored result
(`obs:N`) it produced. A repeat is not dispatched: the model is told it
already has that result, and where. After `STUCK_AFTER` repeats the run is
stuck, and the loop narrows the next turn to an answer, so it ends within
its turn budget with what it has found.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from loci.runtime.loop.action import Action

__all__ = ["STUCK_AFTER", "Earlier", "RepeatGuard"]

STUCK_AFTER = 2


@dataclass(frozen=True)
class Earlier:
    turn: int
    observation_id: str


class RepeatGuard:
    """The run's tool calls so far, and how many were repeats."""

    def __init__(self) -> None:
        self.calls: dict[str, Earlier] = {}
        self.repeats = 0

    def earlier(self, action: Action) -> Earlier | None:
        """The first turn that made this exact call, or None (a repeat is counted)."""
        found = self.calls.get(_key(action))
        if found is not None:
            self.repeats += 1
        return found

    def remember(self, action: Action, turn: int, observation_id: str) -> None:
        self.calls.setdefault(_key(action), Earlier(turn, observation_id))

    @property
    def stuck(self) -> bool:
        return self.repeats >= STUCK_AFTER

    @staticmethod
    def message(action: Action, earlier: Earlier) -> str:
        args = json.dumps(action.arguments, ensure_ascii=False, sort_keys=True)
        return (
            f"Not run again: you already called {action.tool}({args}) at turn {earlier.turn}, and its result is "
            f"{earlier.observation_id}. The same call gives the same result. Use what it found: answer, "
            f'read on with context_read(id="{earlier.observation_id}"), or call something else.'
        )


def _key(action: Action) -> str:
    return json.dumps([action.tool, action.arguments], sort_keys=True, ensure_ascii=False)
