"""What `loci doctor` says of the coding-agent hooks: where they are installed, whether they start, when they ran.

A hook that never runs says nothing: Codex skips a hook nobody trusted, a
plugin whose launcher cannot find `loci` exits before Loci's code runs, and
neither reaches the hooks log. So the doctor looks from the other side:

- where Loci's hooks are installed: Claude Code's user settings and the
  current folder's `.claude/settings.json`, Codex's `hooks.json` (user and
  this folder's `.codex/`), and the Claude Code plugin when Claude Code lists
  it as installed (`~/.claude/plugins/installed_plugins.json`);
- whether each installed command starts: it is run as the client would run
  it (`sh -c`), with `LOCI_HOOK_PROBE=1`, which makes Loci's hook exit 0 at
  once, reading nothing; any other exit (127: not found) is reported with
  the last line it wrote to stderr;
- when each hook last ran beside this home (memory/hooks/log.py `last_runs`),
  and which installed hooks never did.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loci.memory.hooks.codex import codex_home
from loci.memory.hooks.log import last_runs
from loci.memory.hooks.run import PROBE

__all__ = ["PROBE_TIMEOUT_S", "hook_status", "installed_hooks"]

PROBE_TIMEOUT_S = 30
LOCI_MARKERS = ("-m loci.memory.hooks", "loci hook ", '/bin/loci" hook', "/bin/loci hook")


def _hooks_of(settings: Any, root: str | None = None) -> list[tuple[str, str]]:
    """`(event, command)` of each of Loci's hooks in a settings object (a plugin's `${CLAUDE_PLUGIN_ROOT}` filled)."""
    found = []
    events = settings.get("hooks") if isinstance(settings, dict) else None
    for event, groups in (events or {}).items() if isinstance(events, dict) else []:
        for group in groups if isinstance(groups, list) else []:
            for hook in group.get("hooks") or [] if isinstance(group, dict) else []:
                command = str(hook.get("command") or "") if isinstance(hook, dict) else ""
                if any(marker in command for marker in LOCI_MARKERS):
                    found.append((event, command.replace("${CLAUDE_PLUGIN_ROOT}", root) if root else command))
    return found


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _plugin_files() -> list[tuple[str, Path]]:
    """The installed Loci plugins' manifests, from Claude Code's list of installed plugins."""
    listed = _read(Path.home() / ".claude" / "plugins" / "installed_plugins.json") or {}
    plugins = listed.get("plugins", listed) if isinstance(listed, dict) else {}
    found = []
    for name, installs in plugins.items() if isinstance(plugins, dict) else []:
        for install in installs if isinstance(installs, list) else [installs]:
            where = install.get("installPath") if isinstance(install, dict) else None
            if str(name).startswith("loci@") and where:
                found.append((str(where), Path(where) / ".claude-plugin" / "plugin.json"))
    return found


def installed_hooks() -> dict[str, list[tuple[str, str]]]:
    """Where Loci's hooks are installed -> their `(event, command)`s."""
    here = Path.cwd()
    files = {
        Path.home() / ".claude" / "settings.json": None,
        here / ".claude" / "settings.json": None,
        codex_home() / "hooks.json": None,
        here / ".codex" / "hooks.json": None,
    }
    found = {str(path): _hooks_of(_read(path)) for path in files}
    for root, manifest in _plugin_files():
        found[f"the Claude Code plugin at {root}"] = _hooks_of(_read(manifest), root)
    return {where: hooks for where, hooks in found.items() if hooks}


def _probe(command: str) -> tuple[int, str]:
    """The exit code of `command` run as a client runs a hook (with `LOCI_HOOK_PROBE=1`), and its last stderr line."""
    try:
        done = subprocess.run(
            ["sh", "-c", command],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            env={**os.environ, PROBE: "1"},
        )
    except subprocess.TimeoutExpired:
        return -1, f"did not exit within {PROBE_TIMEOUT_S} s"
    lines = done.stderr.strip().splitlines()
    return done.returncode, lines[-1] if lines else ""


def hook_status(db: Path, show: Callable[[str], None]) -> dict[str, Any]:
    """Show where the hooks are installed, which commands fail to start, when each hook last ran; returns it all."""
    installed = installed_hooks()
    runs = last_runs(db)
    failing = {}
    for where, hooks in installed.items():
        show(f"hooks installed in {where}: {', '.join(event for event, _ in hooks)}")
        for command in dict.fromkeys(command for _, command in hooks):
            code, said = _probe(command)
            if code != 0:
                failing[command] = {"exit": code, "stderr": said}
                show(f"  this hook exits {code} before Loci runs: {command}" + (f" ({said})" if said else ""))
    wanted = {"capture" if "capture" in command else "recall" for hooks in installed.values() for _, command in hooks}
    for hook in ("recall", "capture"):
        if hook in runs:
            show(f"hook {hook}: last ran {runs[hook]}")
        elif hook in wanted:
            show(f"hook {hook}: installed but never ran with this home ({db}): is the client skipping it?")
    never = sorted(wanted - set(runs))
    return {"installed": installed, "failing": failing, "last_runs": runs, "never_ran": never}
