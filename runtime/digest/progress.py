"""The progress bar of `loci digest`, drawn by `rich` on stderr.

One line a job: the strategy, a bar of tokens read out of the total, the
chunks, the model calls, the elapsed time and an estimate of the time left,
fitted to the terminal's width (`FittedLine`: a narrow one gives up the calls,
the chunks and the elapsed time before the tokens and the time left, and
counts past 10,000 are written short, `612k/2.2M tokens`).
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
from rich.progress import Progress as RichProgress
from rich.progress import ProgressColumn, Task, TaskID
from rich.text import Text

from loci.runtime.digest.settings import Progress

__all__ = ["ChunkEta", "FittedLine", "ProgressBar", "chunk_eta", "progress_wanted", "short_count"]


def progress_wanted(quiet: bool, stream: Any = None) -> bool:
    """Draw a bar unless told to be quiet or stderr is not a terminal."""
    stream = stream or sys.stderr
    return not quiet and bool(getattr(stream, "isatty", lambda: False)())


class ChunkEta(ProgressColumn):
    """The time left as `ProgressBar` estimated it from the chunks done (`-:--:--` before the first)."""

    def render(self, task: Task) -> Text:
        return Text(_eta_text(task.fields.get("eta")), style="progress.remaining")


def _eta_text(left: float | None) -> str:
    return "-:--:--" if left is None else str(datetime.timedelta(seconds=max(0, round(left))))


def chunk_eta(seconds: float, done: int, left: int) -> float | None:
    """Seconds left, at the pace of `done` chunks in `seconds`; None before any chunk is done."""
    return None if done <= 0 else seconds / done * max(0, left)


def short_count(number: float) -> str:
    """`612368` as `612k`, `2_214_000` as `2.2M`: a count in four characters or so; under 10,000 as it is."""
    if number < 10_000:
        return f"{number:g}"
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if number >= size:
            value = number / size
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
    return f"{number:g}"


class FittedLine(ProgressColumn):
    """The whole line of a job, fitted to the terminal's width: a 135-column line in an 80-column terminal
    read `612368… tokens • … 0:00:…`.

    The parts, in the order they are given up when the line does not fit: the model calls, the chunks, the
    elapsed time; the tokens and the time left stay, and the bar takes what is left (at least `MIN_BAR`
    columns, at most `MAX_BAR`)."""

    MIN_BAR, MAX_BAR = 6, 40

    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console = console

    def render(self, task: Task) -> Text:
        width = max(20, self.console.width - 1)
        done, total = task.completed, task.total
        tokens = f"{short_count(done)}/{short_count(total)} tokens" if total else f"{short_count(done)} tokens"
        fields = task.fields
        parts = {
            "tokens": tokens,
            "chunks": f"chunk {fields.get('chunks', 0)}/{fields.get('chunks_total', '-')}",
            "calls": f"{fields.get('calls', 0)} calls",
            "elapsed": str(datetime.timedelta(seconds=int(task.elapsed or 0))),
            "eta": f"ETA {_eta_text(fields.get('eta'))}",
        }
        label = str(task.description)
        for dropped in ("", "calls", "chunks", "elapsed"):
            parts.pop(dropped, None)
            text = " • ".join(parts.values())
            if len(label) + len(text) + self.MIN_BAR + 2 <= width:
                break
        room = width - len(text) - 2
        if len(label) + self.MIN_BAR + 1 > room:  # the job's number before its strategy
            label = " ".join(label.split()[:2])
        if len(label) + self.MIN_BAR + 1 > room:
            label = label[: max(0, room - self.MIN_BAR - 2)] + "…"
        bar = min(self.MAX_BAR, max(self.MIN_BAR, room - len(label) - 1))
        filled = round(bar * min(1.0, done / total)) if total else 0
        line = Text(label, style="bold")
        line.append(" ")
        line.append("━" * filled, style="bar.complete")
        line.append("━" * (bar - filled), style="bar.back")
        line.append(" " + text)
        return line


class ProgressBar:
    """A rich progress display; `update(progress)` is the hook a job calls. Use as a context manager."""

    def __init__(
        self, *, enabled: bool = True, console: Console | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.enabled, self.clock = enabled, clock
        self._began: dict[int, tuple[float, int]] = {}  # job -> (when reading began, the chunks done then)
        console = console or Console(stderr=True)
        self._bar = RichProgress(FittedLine(console), console=console, disable=not enabled, get_time=clock)
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
