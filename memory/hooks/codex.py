"""Codex's hook events: which transcript a capture reads, and where Codex keeps its files.

Codex runs command hooks as Claude Code does (the event's JSON on stdin,
`hookSpecificOutput.additionalContext` on stdout adds to the model's
context), with the same common fields (`session_id`, `transcript_path`,
`cwd`, `hook_event_name`) and its own: `model` and `turn_id` on the events
of a turn, `last_assistant_message` and `stop_hook_active` at `Stop`,
`source` at `SessionStart`, `trigger` at `PreCompact`. The recall hook reads
only the prompt, the folder and the session id, so it serves both clients
as it is. The capture hook reads the transcript, and a Codex transcript is
a session rollout (memory/imports/codex.py), told from Claude Code's by the
event's `turn_id`, which only Codex sends. `last_assistant_message` is not
needed: the rollout holds the answer too, and a capture that runs before
Codex has written it takes it at the next `Stop`.

Codex gives `transcript_path` as null for a session it keeps no file of; a
capture then looks for the session's rollout under `$CODEX_HOME/sessions/`
(`~/.codex` unless set), whose file names end with the session id, and
without one it is an error for the hooks log.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from loci.memory.errors import UsageError

__all__ = ["codex_home", "find_rollout", "is_codex_event", "transcript_of"]


def codex_home() -> Path:
    """Codex's own folder: `$CODEX_HOME`, else `~/.codex`."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex").expanduser()


def is_codex_event(payload: dict[str, Any]) -> bool:
    """Whether a hook event came from Codex (it names its turn; Claude Code's events do not)."""
    return "turn_id" in payload


def find_rollout(session_id: str, home: Path | None = None) -> Path | None:
    """The newest rollout of `session_id` under Codex's `sessions/` folder, or None."""
    if not session_id or "/" in session_id or "*" in session_id:
        return None
    found = sorted((home or codex_home()).joinpath("sessions").rglob(f"rollout-*{session_id}.jsonl"))
    return found[-1] if found else None


def transcript_of(payload: dict[str, Any]) -> tuple[Path, str]:
    """The transcript a capture imports, and its format (`codex` or `claude-code`)."""
    given = payload.get("transcript_path")
    if not is_codex_event(payload):
        if not given:
            raise UsageError("the hook input has no transcript_path")
        return Path(str(given)).expanduser(), "claude-code"
    path = Path(str(given)).expanduser() if given else find_rollout(str(payload.get("session_id") or ""))
    if path is None:
        session = payload.get("session_id")
        raise UsageError(f"no transcript_path and no rollout of session {session!r} under {codex_home()}/sessions")
    return path, "codex"
