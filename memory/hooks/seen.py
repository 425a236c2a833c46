"""What the recall hook has already put before a session's model: one small file per session beside the home.

Each hook is a process of its own, so the notes SessionStart added would be
added again by the first prompt's recall when the prompt names the same
subject. The recall hook keeps, per session, the ids it has injected
(`hooks-seen/<digest of the session id>`, one `mem:N` a line) and leaves
them out of the session's next recalls: one injection per fact per session.
A `SessionStart` that begins a fresh context (`source` startup, clear or
compact: after compaction the model no longer holds what was added) starts
the list again; a resumed session keeps it, since its context comes back
with it. Files older than `KEEP_S` are removed at a session's start. A home
that cannot be written (a read-only mount) only loses the deduplication:
the recall itself never depends on this file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path

__all__ = ["KEEP_S", "SEEN_DIR", "forget_stale", "remember_seen", "seen_ids", "starts_fresh"]

SEEN_DIR = "hooks-seen"
KEEP_S = 7 * 24 * 3600
FRESH_SOURCES = ("startup", "clear", "compact", "")


def _path(db: Path, session_id: str) -> Path:
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Path(db).expanduser().parent / SEEN_DIR / digest


def starts_fresh(event: str, source: str) -> bool:
    """Whether an event begins a context that holds none of the session's earlier notes."""
    return event == "SessionStart" and source in FRESH_SOURCES


def seen_ids(db: Path, session_id: str) -> set[int]:
    """The node ids already injected into `session_id` (none when the file is missing or unreadable)."""
    if not session_id:
        return set()
    try:
        lines = _path(db, session_id).read_text(encoding="utf-8").split()
    except (OSError, UnicodeDecodeError):
        return set()
    return {int(line) for line in lines if line.isdigit()}


def remember_seen(db: Path, session_id: str, ids: set[int]) -> None:
    """Record `ids` (all the session's injected ids so far) for the session; a failure to write is ignored."""
    if not session_id:
        return
    path = _path(db, session_id)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        partial.write_text("".join(f"{i}\n" for i in sorted(ids)), encoding="utf-8")
        os.replace(partial, path)


def forget_stale(db: Path, now: float | None = None) -> None:
    """Remove the files of sessions not seen for `KEEP_S`."""
    folder = Path(db).expanduser().parent / SEEN_DIR
    limit = (now or time.time()) - KEEP_S
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            with contextlib.suppress(OSError):
                if entry.stat().st_mtime < limit:
                    os.unlink(entry.path)
