"""`loci tokens`: per-user tokens for `loci serve --http` and `loci ui`, each scoped to projects.

    loci tokens add alice --project app --project docs   prints alice's token, once
    loci tokens add ci --project app --read-only          a token that reads and never writes
    loci tokens list                                      name, projects, read-only, created, last used
    loci tokens revoke alice                              refused from its next lookup on

Once a home has a token, its servers serve only requests that carry one
(or the server's own `--token-file`), each limited to that token's projects
(servers/auth/principals.py). The tokens are kept hashed (memory/records/tokens.py):
a lost token cannot be shown again, only revoked and replaced. They live in
the home, a SQLite file or a PostgreSQL database (`--db postgresql://...`),
so every server over that home sees the same ones.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from loci.memory.errors import UsageError
from loci.memory.records.tokens import Tokens
from loci.runtime.cli.display import one_line
from loci.runtime.cli.home import open_home

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("tokens", help="add, list and revoke per-user tokens scoped to projects")
    sub = parser.add_subparsers(dest="tokens_command", metavar="SUBCOMMAND", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db", default=None, help="the Loci home: a SQLite file or postgresql://... (default: $LOCI_HOME/loci.db)"
    )
    common.add_argument("--json", action="store_true", help="print JSON")
    add = sub.add_parser("add", parents=[common], help="make a token and print it once")
    add.add_argument("name", help="who holds it: letters, digits, '.', '_', '@', '-'")
    add.add_argument("--project", action="append", default=[], help="a project it may reach (repeatable)")
    add.add_argument("--read-only", action="store_true", help="it may read and search, never write")
    sub.add_parser("list", parents=[common], help="the tokens, never their values")
    revoke = sub.add_parser("revoke", parents=[common], help="revoke a token by its name")
    revoke.add_argument("name")
    parser.set_defaults(handler=handle)


async def handle(args: argparse.Namespace) -> int:
    if args.tokens_command == "add":
        from loci.memory.projects import check_project
        from loci.memory.records.tokens import check_token_name

        check_token_name(args.name)  # bad input is refused before the home is opened
        if not args.project:
            raise UsageError("a token needs at least one project: --project NAME")
        for project in args.project:
            check_project(project)
    async with open_home(args.db) as store:
        tokens = Tokens(store)
        if args.tokens_command == "add":
            token = await tokens.add(args.name, args.project, read_only=args.read_only)
            _show_added(args, token)
        elif args.tokens_command == "list":
            records = [record.to_dict() for record in await tokens.list()]
            if args.json:
                print(json.dumps(records, indent=2))
            else:
                _print_list(records)
        else:
            await tokens.revoke(args.name)
            print(f"revoked {args.name}")
    return 0


def _show_added(args: argparse.Namespace, token: str) -> None:
    access = "read-only" if args.read_only else "read-write"
    if args.json:
        print(json.dumps({"name": args.name, "projects": args.project, "read_only": args.read_only, "token": token}))
    else:
        print(token)
    projects = ", ".join(dict.fromkeys(args.project))
    print(f"loci: token {args.name} ({access}, {projects}): shown once, keep it now", file=sys.stderr)


def _print_list(records: list[dict[str, Any]]) -> None:
    if not records:
        print("no tokens: every server of this home serves as before (loopback, or --token-file)")
        return
    print(f"{'name':<20}  {'access':<10}  {'created':<16}  {'last used':<16}  projects")
    for r in records:
        access = "read-only" if r["read_only"] else "read-write"
        used = _when(r["last_used"]) if r["last_used"] else "never"
        line = f"{one_line(r['name'], 20):<20}  {access:<10}  {_when(r['created']):<16}  {used:<16}  "
        print(line + ", ".join(r["projects"]))


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))
