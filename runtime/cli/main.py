"""`loci`: the command line.

Each command lives in its own module with `register(subparsers)`, which adds
its parser and sets `handler` to an async function of the parsed arguments
that returns an exit code. `COMMANDS` maps each command's name to the module
that registers it; every one must import (a name that does not is an error,
never a skipped command). `bench` is named, not imported, so `runtime` never
imports `bench`: the benchmarks import the runtime, and register their
command here by name.

Starting fast: a command imports only its own module. `build_parser(argv)`
looks at the first word of the command line; when it names a command, only
that command's module is imported (`loci memory search` never imports the
MCP SDK or llama.cpp), and `loci --version` imports none. Help, no command,
or a word that is not a command register them all, so argparse lists every
choice. The command modules keep their heavy imports (`mcp`, `llama_cpp`,
`httpx`, `rich`, `sqlite_vec`) to the code that runs them.

A command that takes `--db` and was given none takes `$LOCI_DB` when it is
set: a SQLite file path or a `postgresql://` connection string.

This module only parses, runs the handler under anyio, and turns Loci's
errors into one clear line on stderr and a non-zero exit: 2 for the user's
mistakes, 1 for everything else.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["COMMANDS", "VERSION", "build_parser", "main"]

COMMANDS: dict[str, str] = {
    "run": "loci.runtime.cli.run",
    "models": "loci.runtime.cli.models",
    "doctor": "loci.runtime.cli.doctor",
    "serve": "loci.runtime.cli.serve",
    "mcp": "loci.runtime.cli.mcp",
    "memory": "loci.runtime.cli.memory",
    "chat": "loci.runtime.cli.chat",
    "feedback": "loci.runtime.cli.evolution",
    "digest": "loci.runtime.cli.digest",
    "jobs": "loci.runtime.cli.digest",
    "hooks": "loci.runtime.cli.hooks",
    "hook": "loci.runtime.cli.hooks",
    "ui": "loci.runtime.cli.ui",
    "tokens": "loci.runtime.cli.tokens",
    "worker": "loci.runtime.cli.worker",
    "home": "loci.runtime.cli.home_copy",
    "bench": "loci.bench.cli",
}


# The package's version, as pyproject.toml gives it (a test holds them equal):
# reading it from the installed metadata would import `email` and cost more than the rest of `--version`.
VERSION = "0.1.0"


class _Version(argparse.Action):
    """`--version`: prints `VERSION` and exits."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(f"loci {VERSION}")
        parser.exit()


def _wanted(argv: Sequence[str] | None) -> list[str]:
    """The modules the command line needs: its command's, none for `--version`, else all."""
    words = list(sys.argv[1:] if argv is None else argv)
    first = next((word for word in words if not word.startswith("-")), None)
    if first in COMMANDS:
        return [COMMANDS[first]]
    if first is None and words and not {"-h", "--help"} & set(words):
        return []
    return list(dict.fromkeys(COMMANDS.values()))


def build_parser(argv: Sequence[str] | None = None, *, every: bool = False) -> argparse.ArgumentParser:
    """The parser for `argv` (only the commands it names), or for every command with `every=True`."""
    parser = argparse.ArgumentParser(prog="loci", description="An agent-memory runtime for local and remote models.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in list(dict.fromkeys(COMMANDS.values())) if every else _wanted(argv):
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Quiet by default: the MCP SDK would otherwise set the root logger to INFO the first time a server is built.
    logging.basicConfig(level=logging.WARNING, format="loci: %(name)s: %(message)s")
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        build_parser(every=True).print_help()
        return 2
    _home_from_environment(args)
    import anyio

    from loci.memory.errors import LociError, UsageError  # imported here: `memory` brings sqlite-utils

    try:
        return anyio.run(args.handler, args) or 0
    except KeyboardInterrupt:
        print("loci: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of the output went away (`loci memory search ... | head`): it has what it wanted. Python's own
        # flush at exit would fail the same way, so the rest goes nowhere; the exit is a shell's for SIGPIPE.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except UsageError as exc:
        print(f"loci: {exc}", file=sys.stderr)
        return 2
    except LociError as exc:
        print(f"loci: {exc}", file=sys.stderr)
        return 1


def _home_from_environment(args: argparse.Namespace) -> None:
    """A command that takes `--db` and was given none uses `$LOCI_DB` when it is set (a path or a connection
    string); a path is given as `--db`'s own flag would give it, a connection string as text."""
    given = os.environ.get("LOCI_DB")
    if given and getattr(args, "db", "absent") is None:
        from loci.memory.location import is_postgres

        args.db = given if is_postgres(given) else Path(given)


if __name__ == "__main__":
    sys.exit(main())
