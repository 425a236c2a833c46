"""The window: recent turns verbatim, older ones folded into notes.

The window holds the run's latest turns as one line each, and notes that
stand for turns pruned from it, notes first. When it outgrows its budget W,
the older turns are pruned and replaced by one note that summarises them
(prune-and-write, as in MemAct), placed after the notes already there
(`Window.to_fold`): the prompt's prefix up to that point is unchanged, so a
local model's KV cache keeps it. Now and then the notes themselves are folded
into one at the head. `runtime.prompt.notes` writes the note (an extract marked
`[extract]` at once, rewritten by the model later, by default). The model
can also prune deliberately through the `history_prune` tool.

A chat line is a turn too (`Window.add_exchange`): the person's question and the
answer are stored as one `turn:N` and enter the window as the store holds them
(a `StoredLine`, as a resumed chat restores it), so a later line can ask about
an earlier one and the exchange folds into notes like any turn.

Nothing is lost: every turn and every note is a context object (`turn:N`,
`note:N`) in the store, so `context_search` and `context_read` reach what
left the window.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loci.memory.context.store import ContextStore
from loci.memory.errors import LociError, ToolError
from loci.runtime.prompt.build import fit

__all__ = ["NoteLine", "StoredLine", "TurnLine", "Window", "extract_note", "folded_text", "is_note", "item_id"]

PREVIEW_CHARS = 160
HEADER = "Recent turns:\n"
NOTE_HEAD = "note:9999 (notes on turn:9999..turn:9999) [extract]: "  # the longest a note's line adds to its text
STORED_TOKENS = 200  # a turn or note brought back from the store shows at most this much


@dataclass
class TurnLine:
    """One past turn, as the window shows it."""

    turn: int
    tool: str
    arguments: dict[str, Any]
    observation_id: str
    result_tokens: int
    is_error: bool
    turn_id: str | None = None
    preview: str = ""

    def render(self, preview: str | None = None) -> str:
        if preview is not None:
            self.preview = " ".join(preview.split())[:PREVIEW_CHARS].rstrip()  # a space would join the next newline
        args = json.dumps(self.arguments, ensure_ascii=False)
        status = "error" if self.is_error else f"{self.result_tokens} tokens"
        label = f"turn {self.turn}" + (f" [{self.turn_id}]" if self.turn_id else "")
        return f"{label}: {self.tool}({args}) -> {self.observation_id}, {status}: {self.preview}"


@dataclass
class NoteLine:
    """A note in the window, standing for the turns (and notes) it replaced."""

    note_id: str
    covers: list[str]
    text: str
    method: str

    def render(self) -> str:
        span = f"{self.covers[0]}..{self.covers[-1]}" if len(self.covers) > 1 else self.covers[0]
        mark = " [extract]" if self.method == "extract" else ""
        return f"{self.note_id} (notes on {span}){mark}: {self.text}"


@dataclass
class StoredLine:
    """A turn or note brought back from the store (a resumed chat): its id and its text as stored."""

    ref: str
    text: str

    def render(self) -> str:
        return f"{self.ref}: {self.text}"


Item = TurnLine | NoteLine | StoredLine


def is_note(item: Item) -> bool:
    return isinstance(item, NoteLine) or (isinstance(item, StoredLine) and item.ref.startswith("note:"))


def item_id(item: Item) -> str:
    if isinstance(item, StoredLine):
        return item.ref
    return item.note_id if isinstance(item, NoteLine) else str(item.turn_id)


class Window:
    """The window's items, oldest first, with the store their notes go to."""

    def __init__(self, contexts: ContextStore, count: Callable[[str], int]) -> None:
        self.contexts = contexts
        self.count = count
        self.items: list[Item] = []

    def append(self, line: TurnLine) -> None:
        self.items.append(line)

    def clear(self) -> None:
        """Start a run with an empty window (the folded turns stay in the store)."""
        self.items = []

    async def restore(self, ids: list[str]) -> None:
        """Rebuild the window from the ids it held (turns and notes are in the store); unknown ids are skipped."""
        items: list[Item] = []
        for ref in ids:
            try:
                items.append(await self._stored(ref))
            except LociError:
                continue
        self.items = items

    async def add_exchange(self, question: str, answer: str) -> StoredLine:
        """A chat line and its answer, stored as one `turn:N` and appended as the store holds it."""
        text = f"you asked: {' '.join(question.split())}\nloci answered: {' '.join(answer.split())}"
        obj = await self.contexts.add_text("turn", "chat line", text, {"chat": True})
        line = await self._stored(obj.id)
        self.items.append(line)
        return line

    async def _stored(self, ref: str) -> StoredLine:
        obj = await self.contexts.get(ref)
        span = await self.contexts.read(ref, 1, obj.lines, max_tokens=obj.tokens + 1) if obj.lines else None
        return StoredLine(ref, fit(" ".join((span.text if span else "").split()), STORED_TOKENS, self.count)[0])

    def render(self) -> str:
        return "\n".join(item.render() for item in self.items)

    def region(self) -> str:
        """The window region of the prompt: a header and the items, or nothing when it is empty."""
        return HEADER + self.render() if self.items else ""

    def tokens(self) -> int:
        """The tokens of the region as the prompt shows it, header included: what must stay within W, since
        a region cut to its budget loses its head, and with it every token a local model had cached after it."""
        return self.count(self.region()) if self.items else 0

    def ids(self) -> list[str]:
        return [item_id(item) for item in self.items]

    def to_fold(self, budget: int, note_size: int) -> list[Item]:
        """What a fold replaces with one note, when the window has outgrown `budget` tokens.

        The newest turns within an eighth of the budget stay (at least one). Of the older items, the
        turns are folded and the new note goes after the notes already there, so the prompt changes
        only from there on and a local model re-evaluates only what follows. When the notes would then
        take more than half the budget, or the window would still not fit, the notes are folded too,
        into one note at the head."""
        budget -= self.count(HEADER)
        note_size += self.count(NOTE_HEAD)  # the note's line names it and what it covers
        sizes = [self.count(item.render()) + 1 for item in self.items]
        kept, tail = 0, 0
        while kept < len(self.items) - 1 and (kept == 0 or tail + sizes[-kept - 1] <= budget // 8):
            tail += sizes[-kept - 1]
            kept += 1
        older = self.items[: len(self.items) - kept]
        notes = sum(size for item, size in zip(older, sizes, strict=False) if is_note(item))
        turns = [item for item in older if not is_note(item)]
        if turns and notes + note_size <= budget // 2 and notes + note_size + tail <= budget:
            return turns
        return older

    async def prune(self, note: str, ids: list[str], *, method: str = "model") -> NoteLine:
        """Replace the items named by `ids` with one note; the note is stored as `note:N`."""
        if not ids:
            raise ToolError("name at least one turn to prune, e.g. turn_ids=['turn:7']")
        present = self.ids()
        unknown = [ref for ref in ids if ref not in present]
        if unknown:
            raise ToolError(
                f"not in the window: {', '.join(unknown)}; the window holds {', '.join(present) or 'nothing'}"
            )
        if not note.strip():
            raise ToolError("the note is empty: write what the pruned turns established")
        meta: dict[str, Any] = {"covers": ids, "method": method}
        stored = await self.contexts.add_text("note", f"note on {len(ids)} items", note, meta)
        line = NoteLine(stored.id, list(ids), " ".join(note.split()), method)
        first = min(present.index(ref) for ref in ids)
        kept = [item for item in self.items if item_id(item) not in ids]
        kept.insert(min(first, len(kept)), line)
        self.items = kept
        return line


def folded_text(item: Item) -> str:
    """What an item gives the note that replaces it: a turn its line, a note its own text (without the
    header that names it, so notes folded into notes do not pile up headers)."""
    return item.text if isinstance(item, NoteLine | StoredLine) and is_note(item) else item.render()


def extract_note(items: list[Item], max_tokens: int, count: Callable[[str], int]) -> str:
    """A note without a model: the pruned lines themselves, each cut to an even share of the note budget
    (a short line gives what it does not use to the others). So every folded turn keeps the head of its
    line, and what an earlier note holds shrinks with each fold it goes through, oldest first."""
    texts = [folded_text(item) for item in items]
    sizes = [count(text) for text in texts]
    left, shares = max_tokens - 2 * (len(texts) - 1), [0] * len(texts)
    for done, i in enumerate(sorted(range(len(texts)), key=sizes.__getitem__)):
        shares[i] = min(sizes[i], max(1, left // (len(texts) - done)))
        left -= shares[i]
    text = " | ".join(fit(text, share, count)[0] for text, share in zip(texts, shares, strict=True))
    return fit(text, max_tokens, count)[0]
