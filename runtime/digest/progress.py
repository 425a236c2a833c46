"""The progress bar of `loci digest`, drawn by `rich` on stderr.

One line a job: the strategy, a bar of tokens read out of the total, the
chunks, the model calls, the elapsed time and an estimate of the time left.
The estimate comes from the chunks done in this run: the seconds since
reading began over the chunks read since, times the chunks left. (Rich's own
column guesses a speed from the samples of the last 30 seconds, so with a
small model, whose chunk takes longer than that, it never showed a time.)
`clock` is given at construction so a test can drive the time.
`ProgressBar` takes the `Progress` reports a job sends (`runtime.digest.run`)
and is off, drawing nothing, with `--quiet` or when stderr is not a
terminal, so logs and pipes get only the result.
"""

from __future__ import annotations

import datetime
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress import Progress as RichProgress
from rich.text import Text

from runtime.digest.settings import Progress

__all__ = ["ChunkEta", "ProgressBar", "chunk_eta", "progress_wanted"]


def progress_wanted(quiet: bool, stream: Any = None) -> bool:
    """Draw a bar unless told to be quiet or stderr is not a terminal."""
    stream = stream or sys.stderr
    return not quiet and bool(getattr(stream, "isatty", lambda: False)())


class ChunkEta(ProgressColumn):
    """The time left as `ProgressBar` estimated it from the chunks done (`-:--:--` before the first)."""

    def render(self, task: Task) -> Text:
        left = task.fields.get("eta")
        shown = "-:--:--" if left is None else str(datetime.timedelta(seconds=max(0, round(left))))
        return Text(shown, style="progress.remaining")


def chunk_eta(seconds: float, done: int, left: int) -> float | None:
    """Seconds left, at the pace of `done` chunks in `seconds`; None before any chunk is done."""
    return None if done <= 0 else seconds / done * max(0, left)


class ProgressBar:
    """A rich progress display; `update(progress)` is the hook a job calls. Use as a context manager."""

    def __init__(
        self, *, enabled: bool = True, console: Console | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.enabled, self.clock = enabled, clock
        self._began: dict[int, tuple[float, int]] = {}  # job -> (when reading began, the chunks done then)
        self._bar = RichProgress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("tokens"),
            TextColumn("• chunk {task.fields[chunks]}/{task.fields[chunks_total]}"),
            TextColumn("• {task.fields[calls]} calls"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            ChunkEta(),
            console=console or Console(stderr=True),
            disable=not enabled,
            get_time=clock,
        )
        self._tasks: dict[int, TaskID] = {}

    def __enter__(self) -> ProgressBar:
        self._bar.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._bar.stop()

    def update(self, progress: Progress) -> None:
        fields = {
            "chunks": progress.chunks,
            "chunks_total": progress.chunks_total or "-",
            "calls": progress.model_calls,
            "eta": self._eta(progress),
        }
        label = f"job {progress.job_id} {progress.strategy}" + (
            "" if progress.phase == "reading" else f" ({progress.phase})"
        )
        task = self._tasks.get(progress.job_id)
        if task is None:
            self._tasks[progress.job_id] = self._bar.add_task(
                label, total=progress.tokens_total or None, completed=progress.tokens_read, **fields
            )
            return
        self._bar.update(
            task, description=label, total=progress.tokens_total or None, completed=progress.tokens_read, **fields
        )

    def _eta(self, progress: Progress) -> float | None:
        if progress.phase == "done":
            return 0.0
        if progress.phase != "reading":
            return None
        began, before = self._began.setdefault(progress.job_id, (self.clock(), progress.chunks))
        return chunk_eta(self.clock() - began, progress.chunks - before, progress.chunks_total - progress.chunks)

    def done(self, job_id: int) -> None:
        """Take a finished job's line away (batch jobs: the display shows the ones running)."""
        self._began.pop(job_id, None)
        if (task := self._tasks.pop(job_id, None)) is not None:
            self._bar.remove_task(task)
