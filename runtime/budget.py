"""What a run may spend: tokens and wall time, shared down a tree of runs.

A `Budget` node is the accounting of one run: tokens used (prompt plus
completion, from each `Reply`) and a deadline. A child run gets a node under
its parent's, and a charge goes to the node and all its ancestors, so a child
can spend only what remains of every budget above it, siblings included.
Budgets are checked between model calls: a call already running is never cut.
"""

from __future__ import annotations

import time

__all__ = ["Budget"]


class Budget:
    """Tokens used and a deadline, for one run and, through its parent, for every run above it."""

    def __init__(self, *, max_tokens: int | None = None, max_seconds: float | None = None, parent: Budget | None = None) -> None:
        self.max_tokens = max_tokens
        self.max_seconds = max_seconds
        self.parent = parent
        self.used = 0
        self.deadline: float | None = None
        self.start()

    def start(self) -> None:
        self.used = 0
        self.deadline = None if self.max_seconds is None else time.monotonic() + self.max_seconds

    def child(self, *, max_tokens: int | None = None, max_seconds: float | None = None) -> Budget:
        return Budget(max_tokens=max_tokens, max_seconds=max_seconds, parent=self)

    def charge(self, tokens: int) -> None:
        node: Budget | None = self
        while node is not None:
            node.used += tokens
            node = node.parent

    def exhausted(self) -> str | None:
        """Why this budget, or one above it, is used up; None while some is left."""
        node: Budget | None = self
        now = time.monotonic()
        while node is not None:
            if node.max_tokens is not None and node.used >= node.max_tokens:
                return f"the token budget of {node.max_tokens} was used up"
            if node.deadline is not None and now >= node.deadline:
                return f"the time budget of {node.max_seconds:g} s was used up"
            node = node.parent
        return None
