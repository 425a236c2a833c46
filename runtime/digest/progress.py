"""The progress bar of `loci digest`, drawn by `rich` on stderr.

One line a job: the strategy, a bar of tokens read out of the total, the
chunks, the model calls, the elapsed time and an estimate of the time left.
`ProgressBar` takes the `Progress` reports a job sends (`runtime.digest.run`)
and is off, drawing nothing, with `--quiet` or when stderr is not a
terminal, so logs and pipes get only the result.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgress

from runtime.digest.settings import Progress

__all__ = ["ProgressBar", "progress_wanted"]


def progress_wanted(quiet: bool, stream: Any = None) -> bool:
    """Draw a bar unless told to be quiet or stderr is not a terminal."""
    stream = stream or sys.stderr
    return not quiet and bool(getattr(stream, "isatty", lambda: False)())


class ProgressBar:
    """A rich progress display; `update(progress)` is the hook a job calls. Use as a context manager."""

    def __init__(self, *, enabled: bool = True, console: Console | None = None) -> None:
        self.enabled = enabled
        self._bar = RichProgress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("tokens"),
            TextColumn("• chunk {task.fields[chunks]}/{task.fields[chunks_total]}"),
            TextColumn("• {task.fields[calls]} calls"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console or Console(stderr=True),
            disable=not enabled,
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

    def done(self, job_id: int) -> None:
        """Take a finished job's line away (batch jobs: the display shows the ones running)."""
        if (task := self._tasks.pop(job_id, None)) is not None:
            self._bar.remove_task(task)
