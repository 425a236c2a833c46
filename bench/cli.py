"""`loci bench NAME [--json] ...`: run one benchmark workload from `bench/`.

Each workload parses its own arguments (see `bench/__init__.py`), so this
command only finds the workload and prints what it returns: one JSON object
with `--json`, or the same keys one per line for a person. `runtime.cli.main`
lists this module by name, so the runtime never imports `bench`.
"""

from __future__ import annotations

import argparse
import json

from loci.bench import BENCHES, load
from loci.memory.errors import UsageError

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("bench", help="run a benchmark and print its numbers", add_help=False)
    parser.add_argument("-h", "--help", action="store_true", help="list the benchmarks")
    parser.add_argument("name", nargs="?", help=", ".join(BENCHES))
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    parser.set_defaults(handler=run)


def listing() -> str:
    """The benchmarks, each with the first line of its module's docstring."""
    lines = ["usage: loci bench NAME [--json] [options]   (loci bench NAME --help for a benchmark's options)", ""]
    for name in BENCHES:
        summary = (load(name).__doc__ or "").strip().splitlines()[0]
        lines.append(f"  {name:<14} {summary.split(': ', 1)[-1]}")
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> int:
    if args.help and args.name is None:
        print(listing())
        return 0
    if args.name not in BENCHES:
        raise UsageError(f"unknown benchmark {args.name!r}; choose from {', '.join(BENCHES)}")
    module = load(args.name)
    parser = argparse.ArgumentParser(prog=f"loci bench {args.name}")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    module.add_arguments(parser)
    options = parser.parse_args(args.rest)
    result = await module.run(options)
    if options.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {json.dumps(value) if isinstance(value, (dict, list)) else value}")
    return 0
