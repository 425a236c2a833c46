"""Note-writing: how the window stays within its size W (prune-and-write).

When the window outgrows W, `NoteWriter.compact` folds its oldest items into
one note; `prune` folds the older half on request (a person's `/prune`).
The note is written by the model in one short bounded call, or, in
`NoteMode.EXTRACT` or when that call fails, it is a plain extract of the
pruned lines, marked as such. Either way the pruned turns stay in the store
(`runtime.window`), so nothing is lost, only moved out of the prompt. Every
model call is charged to the run's ledger.
"""

from __future__ import annotations

from typing import Any

from memory.errors import BackendError
from runtime.ledger import Ledger
from runtime.model import Model, Request
from runtime.prompt import RegionSizes, fit
from runtime.run import NoteMode
from runtime.window import Window, extract_note, item_id

__all__ = ["NOTE_TOKENS", "NoteWriter"]

NOTE_TOKENS = 192


class NoteWriter:
    """Folds window items into notes, within the window's size and the run's ledger."""

    def __init__(
        self, model: Model, window: Window, sizes: RegionSizes, mode: NoteMode, system: str, ledger: Ledger
    ) -> None:
        self.model, self.window, self.sizes, self.mode = model, window, sizes, mode
        self.system, self.ledger = system, ledger  # the run's system text: its KV prefix serves the note too

    async def compact(self) -> None:
        """Fold the oldest items into one note when the window outgrows W."""
        if self.window.tokens() > self.sizes.window:
            # Free a quarter of the window net of the note that replaces it: a note costs a model call,
            # so each fold frees room for several turns rather than one.
            target = max(0, self.sizes.window * 3 // 4 - self.note_size())
            await self.fold(self.window.oldest_to_prune(target))

    async def prune(self) -> str | None:
        """Fold the older half of the window into a note now; the note's id, or None."""
        if len(self.window.items) < 2:
            return None
        return await self.fold(self.window.items[: len(self.window.items) // 2 or 1])

    async def fold(self, items: list[Any]) -> str:
        text, method = await self.write(items, self.note_size())
        line = await self.window.prune(text, [item_id(item) for item in items], method=method)
        return line.note_id

    def note_size(self) -> int:
        """A note is short: a quarter of the window, at most NOTE_TOKENS (a local model pays per token)."""
        return max(32, min(self.sizes.window // 4, NOTE_TOKENS))

    async def write(self, items: list[Any], size: int) -> tuple[str, str]:
        """A short note on the items, by the model in one bounded call; a marked extract without one."""
        if self.mode is NoteMode.MODEL:
            lines = "\n".join(item.render() for item in items)
            ask = (
                f"Summarise these past turns in at most {size * 3 // 4} words. Keep every constraint, "
                f"finding and id that may still matter; drop the rest.\n\n{lines}"
            )
            messages = [{"role": "system", "content": self.system}, {"role": "user", "content": ask}]
            try:
                reply = await self.model.generate(Request(messages, max_tokens=size, purpose="note"))
                self.ledger.charge(reply.prompt_tokens + reply.completion_tokens)
                if reply.text.strip():
                    return fit(reply.text.strip(), size, self.model.count_tokens)[0], NoteMode.MODEL.value
            except BackendError:
                pass  # the note falls back to an extract; the turns are in the store either way
        return extract_note(items, size, self.model.count_tokens), NoteMode.EXTRACT.value
