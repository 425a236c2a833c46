"""`loci hooks install|uninstall` and `loci hook recall|capture`: memory for coding agents, through their hooks.

    loci hooks install --client claude-code|codex [--scope user|project] [--dir DIR] [--project P] [--db PATH]
    loci hooks uninstall --client claude-code|codex [--scope user|project] [--dir DIR]
    loci hook recall|capture [--db PATH]      (the event's JSON on stdin)

Install merges Loci's hooks into the client's hook file, keeping everything
else in it. Both clients read the same shape, `{"hooks": {event: [{"hooks":
[{"type": "command", "command", "timeout"}]}]}}`, in their own file
(`CLIENTS`): Claude Code's settings (`~/.claude/settings.json` for the user
scope, `DIR/.claude/settings.json` for a project), recall at `SessionStart`
and `UserPromptSubmit`, capture at `Stop`, `PreCompact` and `SessionEnd`;
Codex's `hooks.json` (`$CODEX_HOME/hooks.json`, `~/.codex` by default, or
`DIR/.codex/hooks.json`), recall at the same two events and capture at
`Stop` and `PreCompact` (Codex has no `SessionEnd`; its `Stop` ends every
turn). DIR is the working directory by default. The command it writes is this Python running `-P -m loci.memory.hooks`
(memory/hooks/__main__.py), which imports only the memory layer and so starts
fast, and needs no `loci` on the client's PATH; `-P` keeps the project's folder,
where the client runs it, off the path. A hook is Loci's when its
command runs `-m loci.memory.hooks`; uninstall removes exactly those and the groups
and events they leave empty. Installing again replaces Loci's hooks in place.
`--project P` is kept in the command for when memories are divided by project.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread

from loci.memory.engines.sqlite.store import default_db_path
from loci.memory.errors import UsageError
from loci.memory.hooks.codex import codex_home
from loci.memory.hooks.log import last_errors, log_path
from loci.memory.hooks.run import PROBE, safe_hook
from loci.memory.json_input import loads
from loci.memory.location import NOT_ON_POSTGRES, is_postgres
from loci.memory.projects import DEFAULT_PROJECT, MAX_PROJECT_CHARS, check_project

__all__ = [
    "CLIENTS",
    "MARKER",
    "HookClient",
    "hook_commands",
    "hook_report",
    "install_project",
    "register",
    "settings_path",
]

MARKER = "-m loci.memory.hooks"
# What a hook written before Loci had one import name runs: install and uninstall take those out too.
OLD_MARKER = "-m memory.hooks"
TIMEOUT_S = 30
CODEX_TRUST = (
    "Codex runs a hook only once you trust it, and says nothing of those it skips. To trust Loci's hooks: run"
    " `codex` (in the project's folder for a project's hooks, which also need the project trusted), type /hooks,"
    " and trust each of Loci's four (recall at SessionStart and UserPromptSubmit, capture at Stop and"
    " PreCompact). Installing again with another --db, --project or --scope changes them: Codex then skips them"
    " as modified until you trust them again in /hooks. For one run without trusting them:"
    " `codex exec --dangerously-bypass-hook-trust PROMPT`. Hooks are on by default (`[features] codex_hooks`"
    " is a deprecated alias). `loci doctor` shows when each hook last ran."
)


@dataclass(frozen=True)
class HookClient:
    """A coding agent Loci installs into: its hook file for a scope, the events of each hook, what to tell."""

    user_dir: Callable[[], Path]
    folder: str
    file: str
    recall: tuple[str, ...]
    capture: tuple[str, ...]
    note: str = ""
    hooks_only: bool = False  # the file holds nothing but hooks, so one left empty is removed

    def path(self, scope: str, folder: Path | None = None) -> Path:
        base = self.user_dir() if scope == "user" else (folder or Path.cwd()) / self.folder
        return base / self.file


CLIENTS = {
    "claude-code": HookClient(
        lambda: Path.home() / ".claude",
        ".claude",
        "settings.json",
        ("SessionStart", "UserPromptSubmit"),
        ("Stop", "PreCompact", "SessionEnd"),
    ),
    "codex": HookClient(
        codex_home,
        ".codex",
        "hooks.json",
        ("SessionStart", "UserPromptSubmit"),
        ("Stop", "PreCompact"),
        CODEX_TRUST,
        hooks_only=True,
    ),
}


def register(sub: Any) -> None:
    hooks = sub.add_parser("hooks", help="install Loci's memory hooks into a coding agent")
    verbs = hooks.add_subparsers(dest="hooks_command", metavar="SUBCOMMAND", required=True)
    for verb in ("install", "uninstall"):
        parser = verbs.add_parser(verb, help=f"{verb} the hooks in the client's settings")
        parser.add_argument("--client", choices=list(CLIENTS), default="claude-code")
        parser.add_argument("--scope", choices=["user", "project"], default="user")
        parser.add_argument("--dir", type=Path, default=None, help="the project's folder (default: here)")
        if verb == "install":
            parser.add_argument("--db", type=Path, default=None, help="the Loci home the hooks use")
            parser.add_argument(
                "--project",
                default=None,
                help="the project the hooks' memories belong to (default: with --scope project, the folder's"
                " name; else default)",
            )
        parser.set_defaults(handler=handle_hooks)
    hook = sub.add_parser("hook", help="run one hook (the client calls this, with its JSON on stdin)")
    hook.add_argument("hook", choices=["recall", "capture"])
    hook.add_argument("--db", type=Path, default=None, help="the Loci home (default: $LOCI_HOME/loci.db)")
    hook.add_argument("--project", default=None)
    hook.set_defaults(handler=handle_hook)


async def handle_hook(args: argparse.Namespace) -> int:
    if os.environ.get(PROBE) == "1":
        return 0  # `loci doctor` checks that the command starts
    if args.db is not None and is_postgres(args.db):
        print(f"loci: {NOT_ON_POSTGRES}", file=sys.stderr)
        return 0  # a hook never fails its client
    project = args.project or DEFAULT_PROJECT
    stdin = sys.stdin.read()
    return await anyio.to_thread.run_sync(safe_hook, args.hook, args.db or default_db_path(), stdin, project)


def hook_report(db: Path, show: Callable[[str], None]) -> dict[str, list[str]]:
    """Show the last errors of each hook from the home's hook log (for `loci doctor`); returns them."""
    errors = last_errors(db)
    if not errors:
        show(f"hooks: no errors logged in {log_path(db)}")
    for hook, lines in sorted(errors.items()):
        show(f"hook {hook}: last {len(lines)} error{'s' * (len(lines) != 1)} (in {log_path(db)})")
        for line in lines:
            show(f"  {line}")
    return errors


def settings_path(scope: str, folder: Path | None = None, client: str = "claude-code") -> Path:
    """The file a client's hooks are installed in, for `scope` (and a project's `folder`)."""
    return CLIENTS[client].path(scope, folder)


def install_project(scope: str, folder: Path | None, project: str | None) -> str | None:
    """The project the installed hooks name: the one given, else a project-scope install's folder name (made
    a project name), else none (the hooks then use `default`)."""
    if project is not None:
        return check_project(project)
    if scope != "project":
        return None
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", (folder or Path.cwd()).resolve().name).strip(".-_")
    return check_project(name[:MAX_PROJECT_CHARS] or DEFAULT_PROJECT)


def hook_commands(db: Path | None, project: str | None) -> dict[str, str]:
    """The command of each hook, as the client's shell runs it."""
    extra = ""
    if db is not None:
        extra += f" --db {shlex.quote(str(Path(db).expanduser().resolve()))}"
    if project:
        extra += f" --project {shlex.quote(project)}"
    python = shlex.quote(sys.executable)
    # -P: the client runs the hook in the project's folder, whose own `memory/` must not shadow Loci's.
    return {verb: f"{python} -P {MARKER} {verb}{extra}" for verb in ("recall", "capture")}


async def handle_hooks(args: argparse.Namespace) -> int:
    client = CLIENTS[args.client]
    path = client.path(args.scope, args.dir)
    settings = _read(path)
    before = json.dumps(settings, sort_keys=True)
    removed = _remove_ours(settings)
    if args.hooks_command == "install":
        if args.db is not None and is_postgres(args.db):
            raise UsageError(NOT_ON_POSTGRES)
        commands = hook_commands(args.db, install_project(args.scope, args.dir, args.project))
        events = settings.setdefault("hooks", {})
        for event in client.recall + client.capture:
            command = commands["recall" if event in client.recall else "capture"]
            events.setdefault(event, []).append(
                {"hooks": [{"type": "command", "command": command, "timeout": TIMEOUT_S}]}
            )
        recall, capture = ", ".join(client.recall), ", ".join(client.capture)
        print(f"installed Loci's hooks in {path}: recall at {recall}; capture at {capture}")
        if json.dumps(settings, sort_keys=True) == before:
            print("they are as they were: a client that trusted them still does")
        elif client.note:
            print(client.note)
    else:
        print(f"removed {removed} Loci hooks from {path}" if removed else f"no Loci hooks in {path}")
        if not settings and client.hooks_only and path.exists():
            _remove(path)  # a hooks file left empty held only Loci's hooks: install made it
            return 0
    _write(path, settings)
    return 0


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        settings = loads(text) if text.strip() else {}
    except ValueError as exc:
        raise UsageError(f"{path} is not valid JSON ({exc}); fix it before installing hooks") from exc
    if not isinstance(settings, dict) or not isinstance(settings.get("hooks", {}), dict):
        raise UsageError(f"{path} is not a settings object with a hooks object")
    return settings


def _ours(command: str) -> bool:
    """Whether a hook's command runs Loci's hooks, as written now or before the `loci.` import name."""
    return MARKER in command or OLD_MARKER in command


def _remove_ours(settings: dict[str, Any]) -> int:
    """Take Loci's hooks out of `settings`, and the groups and events left empty; how many were taken."""
    events, removed = settings.get("hooks") or {}, 0
    for event in list(events):
        groups = events[event] if isinstance(events[event], list) else []
        for group in groups:
            hooks = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(hooks, list):
                kept = [h for h in hooks if not (isinstance(h, dict) and _ours(str(h.get("command", ""))))]
                removed += len(hooks) - len(kept)
                group["hooks"] = kept
        events[event] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
        if not events[event]:
            del events[event]
    if "hooks" in settings and not settings["hooks"]:
        del settings["hooks"]
    return removed


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError as exc:
        raise UsageError(f"cannot remove {path}: {exc.strerror}") from exc


def _write(path: Path, settings: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".loci-partial")
        partial.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from exc
