"""The `history` tools: the model prunes its own window and writes the note.

`history_prune(note, turn_ids)` is MemAct's prune-and-write as an action:
the named turns leave the window, the note takes their place, and both stay
in the context store. The window itself belongs to the runtime; this tool
only needs something that can prune, passed in when the server is built.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["HistoryTools", "Prunable"]


class Prunable(Protocol):
    async def prune(self, note: str, ids: list[str], *, method: str = "model") -> Any: ...


class HistoryTools:
    def __init__(self, window: Prunable) -> None:
        self.window = window

    async def history_prune(self, note: str, turn_ids: list[str]) -> dict[str, Any]:
        """Remove turns from your window, keeping `note` in their place: what they established that still matters.

        turn_ids: ids shown in the window, e.g. ["turn:7", "turn:9"]. The turns stay searchable."""
        line = await self.window.prune(note, list(turn_ids))
        return {"note": line.note_id, "pruned": list(turn_ids)}
