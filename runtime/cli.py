"""`loci`: the command line.

Each command lives in its own module with `register(subparsers)`, which adds
its parser and sets `handler` to an async function of the parsed arguments
that returns an exit code. This module only parses, runs the handler under
anyio, and turns Loci's errors into one clear line on stderr and a non-zero
exit: 2 for the user's mistakes, 1 for everything else.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

import anyio

from memory.errors import LociError, UsageError

__all__ = ["main"]

COMMANDS = (
    "runtime.cli_run",
    "runtime.cli_models",
    "runtime.cli_doctor",
    "runtime.cli_serve",
    "runtime.cli_memory",
    "runtime.cli_bench",
    "runtime.cli_chat",
    "runtime.cli_digest",
)


def _version() -> str:
    try:
        return version("loci-agent")
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="loci", description="An agent-memory runtime for local and remote models.")
    parser.add_argument("--version", action="version", version=f"loci {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # a command not built yet
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return anyio.run(args.handler, args) or 0
    except KeyboardInterrupt:
        print("loci: interrupted", file=sys.stderr)
        return 130
    except UsageError as exc:
        print(f"loci: {exc}", file=sys.stderr)
        return 2
    except LociError as exc:
        print(f"loci: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
