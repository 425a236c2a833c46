"""Loading documents from an MCP client: `context_load` and `context_forget`.

A client that wants Loci to navigate its files names them: a file or a
folder, which must lie inside one of the server's `--root` folders once
every symlink is resolved (memory/context/paths.py decides, with the same
reasons `loci run --file/--dir` gives). Without a root nothing may be
loaded: the server's whole disk is not the client's to read. Loading
streams through the context store as `loci run` does (a megabyte at a time,
binaries and `.git` skipped, an unchanged file found again rather than
loaded twice), reporting each file through `progress`; the loaded objects
are then navigable with the `context_*` tools. `context_forget` removes a
loaded document. Results are bounded: at most `MAX_LISTED` objects and as
many skipped files are listed, with the totals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from loci.memory.context.store import ContextStore
from loci.memory.errors import ToolError, UsageError

__all__ = ["MAX_LISTED", "LoadingTools", "Progress"]

MAX_LISTED = 100
Progress = Callable[[float, float | None, str], Awaitable[None]]


class LoadingTools:
    """`context_load` and `context_forget`, bound to a context store with an allow-list of roots."""

    def __init__(self, contexts: ContextStore) -> None:
        self.contexts = contexts

    async def context_load(self, path: str, progress: Progress | None = None) -> dict[str, Any]:
        """Load a file or a folder (recursively; binaries and .git skipped) inside the server's roots, so
        that the context_* tools can list, search and read it. Returns the new ids and what was skipped."""
        if not self.contexts.roots:
            raise ToolError("this server reads no files: start it with --root DIR to allow loading from DIR")

        async def on_file(done: int, total: int, name: str) -> None:
            if progress is not None:
                await progress(done, total, f"loading {name}")

        try:
            loaded = await self.contexts.add_path(path, on_file)
        except UsageError as exc:
            raise ToolError(str(exc)) from exc
        objects = [
            {"id": o.id, "name": o.name, "lines": o.lines, "tokens": o.tokens} for o in loaded.objects[:MAX_LISTED]
        ]
        skipped = [{"path": name, "reason": reason} for name, reason in loaded.skipped[:MAX_LISTED]]
        if progress is not None:
            await progress(len(loaded.objects) + len(loaded.skipped), None, "loaded")
        return {
            "loaded": objects,
            "loaded_count": len(loaded.objects),
            "skipped": skipped,
            "skipped_count": len(loaded.skipped),
            "tokens": sum(o.tokens for o in loaded.objects),
        }

    async def context_forget(self, id: str) -> dict[str, Any]:
        """Remove a loaded document (doc:N) from the context store; its id stops working."""
        try:
            gone = await self.contexts.forget(id)
        except UsageError as exc:
            raise ToolError(str(exc)) from exc
        return {"forgotten": gone.id, "name": gone.name}
