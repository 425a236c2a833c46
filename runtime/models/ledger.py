"""What runs have spent: tokens and wall time, kept down a tree of runs.

A `Ledger` is the account of one run: tokens used (prompt plus completion,
from each `Reply`) against an optional cap, and a deadline. A child run gets
a ledger under its parent's, and a charge goes to the ledger and all its
ancestors, so a child can spend only what remains of every cap above it,
siblings included. Ledgers are checked between model calls: a call already
running is never cut.
"""

from __future__ import annotations

import time

__all__ = ["Ledger"]


class Ledger:
    """Tokens used and a deadline, for one run and, through its parent, for every run above it."""

    def __init__(
        self, *, max_tokens: int | None = None, max_seconds: float | None = None, parent: Ledger | None = None
    ) -> None:
        self.max_tokens = max_tokens
        self.max_seconds = max_seconds
        self.parent = parent
        self.used = 0
        self.deadline: float | None = None
        self.start()

    def start(self) -> None:
        self.used = 0
        self.deadline = None if self.max_seconds is None else time.monotonic() + self.max_seconds

    def child(self, *, max_tokens: int | None = None, max_seconds: float | None = None) -> Ledger:
        return Ledger(max_tokens=max_tokens, max_seconds=max_seconds, parent=self)

    def charge(self, tokens: int) -> None:
        ledger: Ledger | None = self
        while ledger is not None:
            ledger.used += tokens
            ledger = ledger.parent

    def exhausted(self) -> str | None:
        """Why this ledger's cap, or one above it, is used up; None while some is left."""
        ledger: Ledger | None = self
        now = time.monotonic()
        while ledger is not None:
            if ledger.max_tokens is not None and ledger.used >= ledger.max_tokens:
                return f"the token budget of {ledger.max_tokens} was used up"
            if ledger.deadline is not None and now >= ledger.deadline:
                return f"the time budget of {ledger.max_seconds:g} s was used up"
            ledger = ledger.parent
        return None
