"""Note-writing: how the window stays within its size W (prune-and-write).

When the window outgrows W, `NoteWriter.compact` folds its older turns into
one note (`Window.to_fold` says which); `prune` folds the older half on
request (a person's `/prune`).
Who writes the note, and when, is the run's `NoteMode`:

- `BACKGROUND` (the default): the fold writes a plain extract of the pruned
  lines at once, marked `[extract]`, and, where a worker will run it (the
  writer was built with a `NoteQueue`: `loci chat`'s worker, or the session's
  own beside a remote model; `runtime.session.session` decides), queues a `note` job
  (key `note:<note id>`) holding the lines. The turn never waits for a model. Where no worker runs (`loci run`
  on a local model) the extract stays: a rewrite made after the run's window
  is gone would serve nobody.
  `NoteRefiner`, run by a worker, rewrites the note with the model when the
  foreground is idle and stores it as a new `note:N` (meta `refines`) in the
  same transaction that completes the job. At its next fold the window takes
  the rewrites in place of their extracts (`adopt`): the fold changes the
  prompt from its new note on anyway, and the rewrite ready by then is
  usually that of the latest note, just before it.
- `MODEL`: the model writes the note in one short bounded call that the
  turn waits for. A person's `/prune` is written this way in either mode,
  since the person is waiting for it.
- `EXTRACT`: the extract, and nothing later.

A model call that fails, or a note stuck repeating itself (`note_problem`),
leaves the extract.
The pruned turns stay in the store either way (`runtime.prompt.window`), so nothing
is lost, only moved out of the prompt. A model call made during a run is
charged to the run's ledger; a background rewrite, made after the fold, is not.
"""

from __future__ import annotations

import enum
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loci.memory.context.store import ContextStore
from loci.memory.errors import BackendError
from loci.memory.jobs.queue import Job, JobDeferred, Jobs
from loci.memory.jobs.worker import Foreground, Worker
from loci.runtime.models.base import Model, Request, is_serial
from loci.runtime.models.ledger import Ledger
from loci.runtime.prompt.build import RegionSizes, fit
from loci.runtime.prompt.window import NoteLine, Window, extract_note, folded_text, is_note, item_id

__all__ = [
    "NOTE_JOB",
    "NOTE_TOKENS",
    "NoteMode",
    "NoteQueue",
    "NoteRefiner",
    "NoteWriter",
    "note_messages",
    "note_problem",
    "rewrite_queued",
]

NOTE_TOKENS = 192
NOTE_JOB = "note"
FOLDS_AT_MOST = 2  # folds in one compaction: the planned one, and one more when the window is still over W


class NoteMode(enum.Enum):
    """Who writes the note that replaces pruned turns, and when (`runtime.prompt.notes`).

    BACKGROUND: a marked extract at once, rewritten by the model later in a `note` job;
    MODEL: the model, in one bounded call the turn waits for; EXTRACT: the extract only."""

    BACKGROUND = "background"
    MODEL = "model"
    EXTRACT = "extract"


def note_problem(text: str) -> str | None:
    """Why a model's note may not replace the extract, or None: an empty reply, or one stuck in a loop
    (a small model's failure: "1. extract: 1 2. extract: 1 ..."), seen as few distinct words once
    numbers are set aside. The extract it would replace is the folded lines themselves."""
    words = [re.sub(r"\d+", "#", word) for word in text.lower().split()]
    if not words:
        return "the model wrote nothing"
    if len(words) >= 12 and len(set(words)) < 0.35 * len(words):
        return f"the model's note repeats itself ({len(set(words))} distinct words in {len(words)})"
    return None


def note_messages(system: str, lines: str, size: int) -> list[dict[str, str]]:
    """The note request: the run's system text (its KV prefix serves the note too) and the lines to summarise."""
    ask = (
        f"Summarise these past turns in at most {size * 3 // 4} words. Keep every constraint, "
        f"finding and id that may still matter; drop the rest.\n\n{lines}"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": ask}]


@dataclass(frozen=True)
class NoteQueue:
    """Where a fold's note rewrites go: the job queue, and the `wake` of the worker that runs them."""

    jobs: Jobs
    wake: Callable[[], None]


class NoteWriter:
    """Folds window items into notes, within the window's size and the run's ledger.

    With a `queue`, a `BACKGROUND` fold queues its rewrite there; without one no worker would run it,
    and the extract stays."""

    def __init__(
        self,
        model: Model,
        window: Window,
        sizes: RegionSizes,
        mode: NoteMode,
        system: str,
        ledger: Ledger,
        *,
        queue: NoteQueue | None = None,
    ) -> None:
        self.model, self.window, self.sizes, self.mode = model, window, sizes, mode
        self.ledger = ledger
        self.system = self._system(system)  # the turn's system text: its KV prefix serves the note too
        self.queue_to = queue
        self.jobs = queue.jobs if queue is not None else Jobs(window.contexts.store, project=window.contexts.project)
        self.queued = 0  # note jobs this writer queued
        self.adopted = 0  # refined notes it took into the window

    def begin_run(self, sizes: RegionSizes, system: str) -> None:
        """Take a run's region sizes and system text: its notes fit its window and share its KV prefix."""
        self.sizes = sizes
        self.system = self._system(system)

    def _system(self, system: str) -> str:
        """The system text as a turn's prompt shows it, cut to the system region: the note's prompt stays
        within the window, and its system message is the turn's, so the KV prefix is the same."""
        return fit(system, self.sizes.system, self.model.count_tokens)[0]

    async def compact(self) -> None:
        """Fold the older turns into one note when the window outgrows W (`Window.to_fold` says which).

        A window over W would be cut at its head, and a local model would re-evaluate all of it; so a fold
        that leaves it over W (a long newest turn) is followed by another, of everything but the newest."""
        if self.window.tokens() > self.sizes.window:
            await self.adopt()
            await self.fold(self.window.to_fold(self.sizes.window, self.note_size()))
        for _ in range(FOLDS_AT_MOST - 1):
            if self.window.tokens() <= self.sizes.window or len(self.window.items) < 2:
                return
            await self.fold(self.window.items[:-1])

    async def prune(self) -> str | None:
        """Fold the older half of the window into a note now, written by the model; the note's id, or None."""
        if len(self.window.items) < 2:
            return None
        return await self.fold(self.window.items[: len(self.window.items) // 2 or 1], wait=True)

    async def fold(self, items: list[Any], *, wait: bool = False) -> str:
        """Replace `items` with one note; with `wait`, a `BACKGROUND` note is written by the model now."""
        size = self.note_size()
        if self.mode is NoteMode.MODEL or (wait and self.mode is NoteMode.BACKGROUND):
            text, method = await self.write(items, size)
        else:
            text, method = extract_note(items, size, self.model.count_tokens), NoteMode.EXTRACT.value
        line = await self.window.prune(text, [item_id(item) for item in items], method=method)
        if self.mode is NoteMode.BACKGROUND and method == NoteMode.EXTRACT.value and self.queue_to is not None:
            await self.queue(line, items, size)
        return line.note_id

    def note_size(self) -> int:
        """A note is short: a quarter of the window, at most NOTE_TOKENS (a local model pays per token)."""
        return max(32, min(self.sizes.window // 4, NOTE_TOKENS))

    async def write(self, items: list[Any], size: int) -> tuple[str, str]:
        """A short note on the items, by the model in one bounded call; a marked extract if that fails."""
        lines = "\n".join(folded_text(item) for item in items)
        try:
            reply = await self.model.generate(
                Request(note_messages(self.system, lines, size), max_tokens=size, purpose="note")
            )
            self.ledger.charge(reply.prompt_tokens + reply.completion_tokens)
            text = fit(reply.text.strip(), size, self.model.count_tokens)[0].strip()
            if not note_problem(text):
                return text, NoteMode.MODEL.value
        except BackendError:
            pass  # the note falls back to an extract; the turns are in the store either way
        return extract_note(items, size, self.model.count_tokens), NoteMode.EXTRACT.value

    async def queue(self, line: NoteLine, items: list[Any], size: int) -> None:
        """Queue the model's rewrite of an extract note: its lines, its size and the system text."""
        payload = {
            "note": line.note_id,
            "covers": line.covers,
            "lines": "\n".join(folded_text(item) for item in items),
            "size": size,
            "system": self.system,
        }
        assert self.queue_to is not None, "fold queues only with a queue"
        await self.queue_to.jobs.enqueue(NOTE_JOB, payload, key=f"{NOTE_JOB}:{line.note_id}")
        self.queued += 1
        self.queue_to.wake()

    async def adopt(self) -> int:
        """Put the refined notes that are ready in place of their extracts in the window; how many.
        Called as a fold starts: the fold changes the prompt from its new note on anyway, so a rewrite of
        the latest note (the usual case) costs a local model only the difference in that note's length."""
        places = {f"{NOTE_JOB}:{item_id(item)}": i for i, item in enumerate(self.window.items) if _may_refine(item)}
        if not places:
            return 0
        taken = 0
        for key, done in (await self.jobs.results(list(places))).items():
            if "note" in done:  # a job that kept the extract has nothing to give
                self.window.items[places[key]] = NoteLine(done["note"], done["covers"], done["text"], "model")
                taken += 1
        self.adopted += taken
        return taken


def _may_refine(item: Any) -> bool:
    """A note whose rewrite may be ready: an extract, or a note restored from the store (a resumed chat)."""
    return is_note(item) and getattr(item, "method", NoteMode.EXTRACT.value) == NoteMode.EXTRACT.value


class NoteRefiner:
    """The `note` job's handler: the model rewrites a queued extract while the foreground is idle.

    With a serial model (a local one, `runtime.models.base.is_serial`) the rewrite starts only when no
    foreground run is going (`Foreground.wait_idle`), and gives way as soon as one starts: the reply
    is interrupted and the job goes back to the queue unspent (`JobDeferred`). A model that serves
    calls concurrently (a remote one) rewrites at once, between and beside the turns. The new note
    and the job's completion are one transaction; an empty or looping reply keeps the extract.
    """

    def __init__(self, model: Model, contexts: ContextStore, jobs: Jobs, foreground: Foreground) -> None:
        self.model, self.contexts, self.jobs = model, contexts, jobs
        self.foreground = foreground if is_serial(model) else None

    async def __call__(self, job: Job) -> dict[str, Any]:
        note, covers, size = job.payload["note"], list(job.payload["covers"]), int(job.payload["size"])
        interrupt = None
        if self.foreground is not None:
            await self.foreground.wait_idle()
            interrupt = _when_busy(self.foreground)
        messages = note_messages(job.payload["system"], job.payload["lines"], size)
        reply = await self.model.generate(Request(messages, max_tokens=size, purpose="note", interrupt=interrupt))
        if interrupt is not None and interrupt():
            raise JobDeferred(f"a foreground run started while {note} was being rewritten")
        text = fit(reply.text.strip(), size, self.model.count_tokens)[0].strip()
        if why := note_problem(text):
            return await self.jobs.complete(job, lambda conn: {"kept": "extract", "why": why})
        meta = {"covers": covers, "method": NoteMode.MODEL.value, "refines": note}

        def effect(conn: Any) -> dict[str, Any]:
            ref = self.contexts.add_text_now(conn, "note", f"note on {len(covers)} items", text, meta)
            return {"note": ref, "refines": note, "covers": covers, "text": " ".join(text.split())}

        return await self.jobs.complete(job, effect)


async def rewrite_queued(model: Model, contexts: ContextStore) -> list[float]:
    """Run every queued note rewrite on `model` now, as an idle worker would; the seconds each took.
    For the benchmarks, which count the rewrites' cost apart from the turns'."""
    jobs = Jobs(contexts.store, project=contexts.project)
    refiner = NoteRefiner(model, contexts, jobs, Foreground())
    seconds: list[float] = []

    async def timed(job: Job) -> object:
        began = time.monotonic()
        try:
            return await refiner(job)
        finally:
            seconds.append(round(time.monotonic() - began, 3))

    await Worker(jobs, {NOTE_JOB: timed}).drain()
    return seconds


def _when_busy(foreground: Foreground) -> Callable[[], bool]:
    return lambda: foreground.busy
