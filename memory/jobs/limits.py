"""The job queue's own limits, apart from any kind of work that runs through it.

`JobLimits` holds the queue's two numbers: `max_attempts`, the tries a job
gets before it is marked `failed` (keeping its last error), written into each
job's row as it is queued, so every kind (note, describe, refine, whatever
comes next) meets the same limit; and `lease_s`, how long a claimed job stays
its worker's when that worker's process cannot be checked (another host).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_LIMITS", "JobLimits"]


@dataclass(frozen=True)
class JobLimits:
    max_attempts: int = 3
    lease_s: float = 600.0


DEFAULT_LIMITS = JobLimits()
