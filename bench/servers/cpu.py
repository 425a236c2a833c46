"""The CPU time the servers a benchmark started spent: what a loaded machine does not blur.

On a machine that other work shares, a round trip's time is mostly
waiting for a core (each process and thread woken in a call waits its
turn), so two runs of the same tree differ more than two trees do. The
CPU time a server process spends per call does not wait: it is the work
the server does for the call, and it moves only when that work does.
`ServerCpu` reads, from /proc, the user and system time of every live
process descended from this one (a server, and what it started: `npx`
and the node it runs), so a bench takes it before and after a phase and
divides by the calls. On a system without /proc it reads 0, and a bench
reports no per-call CPU.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ServerCpu"]

_PROC = Path("/proc")


class ServerCpu:
    """CPU seconds of the live descendants of this process (or, given `root`, of that process and its
    descendants), read at `__call__`; `per_call` turns a difference into milliseconds per call."""

    def __init__(self, root: int | None = None) -> None:
        self.root = os.getpid() if root is None else root
        self.inclusive = root is not None
        self.ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def __call__(self) -> float:
        parents: dict[int, int] = {}
        times: dict[int, int] = {}
        try:
            entries = list(_PROC.iterdir())
        except OSError:
            return 0.0
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # gone meanwhile, or not readable
            pid = int(entry.name)
            parents[pid] = int(fields[1])
            times[pid] = int(fields[11]) + int(fields[12])
        total = 0
        for pid, ticks in times.items():
            seen, up = 0, parents.get(pid)
            while up is not None and up != self.root and seen < 64:
                up, seen = parents.get(up), seen + 1
            if up == self.root or (self.inclusive and pid == self.root):
                total += ticks
        return total / self.ticks

    @staticmethod
    def per_call(before: float, after: float, calls: int) -> float:
        """Milliseconds of server CPU per call between two readings."""
        return round((after - before) / max(calls, 1) * 1000, 3)
