"""`loci`: the command line.

Each command lives in its own module with `register(subparsers)`, which adds
its parser and sets `handler` to an async function of the parsed arguments
that returns an exit code. `COMMANDS` names those modules; every one must
import (a name that does not is an error, never a skipped command). `bench`
is named, not imported, so `runtime` never imports `bench`: the benchmarks
import the runtime, and register their command here by name. This module
only parses, runs the handler under anyio, and turns Loci's errors into one
clear line on stderr and a non-zero exit: 2 for the user's mistakes, 1 for
everything else.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

import anyio

from memory.errors import LociError, UsageError

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS = (
    "runtime.cli.run",
    "runtime.cli.models",
    "runtime.cli.doctor",
    "runtime.cli.serve",
    "runtime.cli.mcp",
    "runtime.cli.memory",
    "runtime.cli.chat",
    "runtime.cli.evolution",
    "runtime.cli.digest",
    "runtime.cli.ui",
    "bench.cli",
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
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Quiet by default: the MCP SDK would otherwise set the root logger to INFO the first time a server is built.
    logging.basicConfig(level=logging.WARNING, format="loci: %(name)s: %(message)s")
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
