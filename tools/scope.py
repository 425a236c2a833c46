"""A child agent's view of the store: its target span, and what it made itself.

A recursive step hands a child agent one span (`doc:3:120-180`) as its whole
context. `Scope` is what enforces that in the child's context tools: it may
list, outline, read and search the target object only within the target's
lines, plus the objects created after the child started (its own tool
results, turns and notes, which it must be able to read on). Anything else
is refused with a message naming what the child may read.
"""

from __future__ import annotations

from dataclasses import dataclass

from loci.memory.context.objects import Target, parse_id
from loci.memory.errors import ToolError

__all__ = ["Scope"]


@dataclass(frozen=True)
class Scope:
    target: Target
    since: int  # row ids above this were created during the child's run

    def allows(self, ref: str) -> bool:
        if ref == self.target.id:
            return True
        kind, number = parse_id(ref)
        return kind != "doc" and number > self.since

    def check(self, ref: str) -> None:
        if not self.allows(ref):
            raise ToolError(f"{ref} is outside this helper's span; it may read {self.target} and its own results")

    def lines(self, ref: str, start: int, end: int | None) -> tuple[int, int | None]:
        """Clamp a line range of `ref` into the target's lines (other objects are not clamped)."""
        if ref != self.target.id or self.target.start is None:
            return start, end
        low, high = self.target.start, self.target.end
        start = min(max(start, low), high if high is not None else start)
        end = high if end is None else (min(end, high) if high is not None else end)
        return start, end

    def covers(self, ref: str, start: int, end: int) -> bool:
        """Whether lines start..end of `ref` overlap what the scope allows."""
        if not self.allows(ref):
            return False
        if ref != self.target.id or self.target.start is None:
            return True
        high = self.target.end if self.target.end is not None else end
        return start <= high and end >= self.target.start

    def contains(self, target: Target) -> bool:
        """Whether a recursive target lies inside the scope (for context_ask and context_map)."""
        if target.id != self.target.id:
            return self.allows(target.id)
        if self.target.start is None:
            return True
        if target.start is None:
            return False
        high = self.target.end if self.target.end is not None else target.end
        return self.target.start <= target.start and (target.end or target.start) <= (
            high or target.end or target.start
        )
